/**
 * Method sets copied from the spec's method tables, table by table, so a reviewer can hold one
 * against the other. A method not listed for a network answers -32601 there.
 */

/** Network R (optimistic rollup). */
export const R_METHODS: readonly string[] = [
  // Block and chain
  'eth_blockNumber',
  'eth_chainId',
  'eth_getBlockByNumber',
  'eth_getBlockByHash',
  'eth_getBlockTransactionCountByNumber',
  'eth_getBlockTransactionCountByHash',
  'eth_getBlockReceipts',
  'eth_syncing',
  // Account and state
  'eth_getBalance',
  'eth_getCode',
  'eth_getStorageAt',
  'eth_getProof',
  'eth_getTransactionCount',
  // Transactions
  'eth_sendRawTransaction',
  'eth_getTransactionByHash',
  'eth_getTransactionByBlockHashAndIndex',
  'eth_getTransactionByBlockNumberAndIndex',
  'eth_getTransactionReceipt',
  'eth_call',
  'eth_estimateGas',
  // Gas
  'eth_gasPrice',
  'eth_maxPriorityFeePerGas',
  'eth_feeHistory',
  // Logs and filters
  'eth_getLogs',
  'eth_newFilter',
  'eth_newBlockFilter',
  'eth_newPendingTransactionFilter',
  'eth_getFilterChanges',
  'eth_getFilterLogs',
  'eth_uninstallFilter',
  // WebSocket
  'eth_subscribe',
  'eth_unsubscribe',
  // Network and client
  'net_version',
  'net_listening',
  'net_peerCount',
  'web3_clientVersion',
  'web3_sha3',
];

/** Network P (proof of stake). */
export const P_METHODS: readonly string[] = [
  // Account
  'eth_accounts',
  'eth_getBalance',
  'eth_getTransactionCount',
  'eth_getCode',
  'eth_getStorageAt',
  'eth_getProof',
  // Block
  'eth_blockNumber',
  'eth_getBlockByHash',
  'eth_getBlockByNumber',
  'eth_getBlockTransactionCountByHash',
  'eth_getBlockTransactionCountByNumber',
  // Transaction
  'eth_getTransactionByHash',
  'eth_getTransactionByBlockHashAndIndex',
  'eth_getTransactionByBlockNumberAndIndex',
  'eth_getTransactionReceipt',
  'eth_sendRawTransaction',
  'eth_sendTransaction',
  'eth_sign',
  'eth_pendingTransactions',
  // Contract
  'eth_call',
  'eth_estimateGas',
  // Filter
  'eth_newFilter',
  'eth_newBlockFilter',
  'eth_newPendingTransactionFilter',
  'eth_getFilterChanges',
  'eth_getFilterLogs',
  'eth_getLogs',
  'eth_uninstallFilter',
  'eth_subscribe',
  'eth_unsubscribe',
  // Gas
  'eth_gasPrice',
  'eth_feeHistory',
  'eth_maxPriorityFeePerGas',
  // Network
  'eth_chainId',
  'eth_syncing',
  'eth_protocolVersion',
  'net_version',
  'net_listening',
  'net_peerCount',
  // Node
  'eth_coinbase',
  'eth_mining',
  'eth_hashrate',
  'rpc_modules',
  'web3_clientVersion',
  'web3_sha3',
  // Uncle
  'eth_getUncleByBlockHashAndIndex',
  'eth_getUncleByBlockNumberAndIndex',
  'eth_getUncleCountByBlockHash',
  'eth_getUncleCountByBlockNumber',
];

/** Network E (mainnet and both test networks), in the order of the spec's table. */
export const E_METHODS: readonly string[] = [
  'eth_getBalance',
  'eth_accounts',
  'eth_blockNumber',
  'eth_getBlockByNumber',
  'eth_getBlockByHash',
  'eth_getTransactionByHash',
  'eth_getTransactionReceipt',
  'eth_getBlockReceipts',
  'eth_getBlockTransactionCountByHash',
  'eth_getBlockTransactionCountByNumber',
  'eth_getTransactionByBlockHashAndIndex',
  'eth_getTransactionByBlockNumberAndIndex',
  'eth_call',
  'eth_estimateGas',
  'eth_getCode',
  'eth_getStorageAt',
  'eth_getProof',
  'debug_accountRange',
  'debug_batchSendRawTransaction',
  'debug_getBadBlocks',
  'debug_storageRangeAt',
  'debug_traceBlock',
  'debug_traceBlockByHash',
  'debug_traceBlockByNumber',
  'debug_traceCall',
  'debug_traceTransaction',
  'eth_mining',
  'eth_hashrate',
  'eth_syncing',
  'eth_submitWork',
  'eth_submitHashrate',
  'eth_getWork',
  'eth_coinbase',
  'eth_getLogs',
  'eth_newFilter',
  'eth_uninstallFilter',
  'eth_newBlockFilter',
  'eth_newPendingTransactionFilter',
  'eth_getFilterChanges',
  'eth_getFilterLogs',
  'eth_gasPrice',
  'eth_chainId',
  'eth_maxPriorityFeePerGas',
  'eth_feeHistory',
  'eth_sendRawTransaction',
  'web3_clientVersion',
  'web3_sha3',
  'rpc_modules',
  'net_listening',
  'net_peerCount',
  'net_version',
  'eth_subscribe',
  'eth_unsubscribe',
];

/** Network S (object model); both methods are deprecated upstream but still relayed. */
export const S_METHODS: readonly string[] = [
  'suix_getLatestSuiSystemState',
  'sui_tryMultiGetPastObjects',
];

/**
 * Methods the spec marks deprecated (its "Versioning" 4: both of network S's; their removal date
 * and replacements: not shown). Still relayed; the gateway tells callers so (rpc-gateway README,
 * "Deprecated methods").
 */
export const DEPRECATED_METHODS: ReadonlySet<string> = new Set(S_METHODS);
