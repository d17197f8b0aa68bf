import { createServer, type Server } from 'node:http';

/**
 * fake-sui-upstream: a recorded-response stand-in for a network S node (there is no S node to
 * run here, and no internet). Answers the spec's two S methods with recorded JSON in the spec's
 * shapes, and the gateway's health probe; every other method is -32601, a body that is not JSON
 * -32700. Single calls and batches. `mode` switches it to node trouble (HTTP 500) for error
 * tests. Counts the calls it received. The integration tests use it, and `npm start` runs it for
 * the shared endpoint when SUI_UPSTREAM_URLS is unset (named so in the stack's log).
 */
export const RECORDED_SYSTEM_STATE = {
  epoch: '512',
  protocolVersion: '70',
  systemStateVersion: '2',
  epochStartTimestampMs: '1726000000000',
  epochDurationMs: '86400000',
  storageFundTotalObjectStorageRebates: '1000000000',
  storageFundNonRefundableBalance: '2000000',
  referenceGasPrice: '750',
  safeMode: false,
  safeModeStorageRewards: '0',
  safeModeComputationRewards: '0',
  safeModeStorageRebates: '0',
  safeModeNonRefundableStorageFee: '0',
  stakeSubsidyStartEpoch: '20',
  stakeSubsidyBalance: '1000000000000',
  stakeSubsidyDistributionCounter: '492',
  stakeSubsidyCurrentDistributionAmount: '1000000000',
  stakeSubsidyPeriodLength: '10',
  stakeSubsidyDecreaseRate: 1000,
  maxValidatorCount: '150',
  minValidatorJoiningStake: '30000000000000000',
  validatorLowStakeThreshold: '20000000000000000',
  validatorVeryLowStakeThreshold: '15000000000000000',
  validatorLowStakeGracePeriod: '7',
  totalStake: '8000000000000000000',
  activeValidators: [],
  pendingActiveValidatorsId: '0x01',
  pendingActiveValidatorsSize: '0',
  pendingRemovals: [],
  stakingPoolMappingsId: '0x02',
  stakingPoolMappingsSize: '110',
  inactivePoolsId: '0x03',
  inactivePoolsSize: '3',
  validatorCandidatesId: '0x04',
  validatorCandidatesSize: '0',
  atRiskValidators: [],
  validatorReportRecords: [],
};

export const RECORDED_PAST_OBJECT = {
  status: 'VersionFound',
  details: { objectId: '0x5', version: '1', content: { dataType: 'moveObject' } },
};

export interface FakeSuiUpstream {
  url: string;
  calls: string[];
  mode: 'ok' | 'trouble';
  close(): Promise<void>;
}

export async function startFakeSuiUpstream(
  options: { host?: string; port?: number } = {},
): Promise<FakeSuiUpstream> {
  const state: FakeSuiUpstream = { url: '', calls: [], mode: 'ok', close: async () => undefined };
  const answer = (request: unknown): unknown => {
    const call = (request ?? {}) as { id?: unknown; method?: unknown; params?: unknown };
    const id = call.id ?? null;
    const method = typeof call.method === 'string' ? call.method : '';
    state.calls.push(method);
    const params = Array.isArray(call.params) ? call.params : [];
    const result =
      method === 'suix_getLatestSuiSystemState'
        ? RECORDED_SYSTEM_STATE
        : method === 'sui_tryMultiGetPastObjects' && Array.isArray(params[0])
          ? params[0].map(() => RECORDED_PAST_OBJECT)
          : method === 'sui_getLatestCheckpointSequenceNumber'
            ? '1000'
            : undefined;
    return result === undefined
      ? { jsonrpc: '2.0', id, error: { code: -32601, message: 'method not found' } }
      : { jsonrpc: '2.0', id, result };
  };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      let request: unknown;
      try {
        request = JSON.parse(body);
      } catch {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}');
        return;
      }
      const calls = Array.isArray(request) ? request : [request];
      const probeOnly = calls.every(
        (c) => (c as { method?: unknown })?.method === 'sui_getLatestCheckpointSequenceNumber',
      );
      if (state.mode === 'trouble' && !probeOnly) {
        state.calls.push(...calls.map((c) => String((c as { method?: unknown })?.method)));
        res.writeHead(500).end('upstream exploded');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(Array.isArray(request) ? request.map(answer) : answer(request)));
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  const address = server.address() as { port: number };
  state.url = `http://${host}:${address.port}`;
  // Ends kept-alive connections too: a gateway that keeps probing would hold close() open.
  state.close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return state;
}
