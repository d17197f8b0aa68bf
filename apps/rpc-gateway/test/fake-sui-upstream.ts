import { createServer, type Server } from 'node:http';

/**
 * A recorded-response upstream for network S (there is no S node to run here): answers the
 * two spec methods with recorded JSON in the spec's shapes, and the health probe. `mode`
 * switches it to node trouble (HTTP 500) for error tests. Counts the calls it received.
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

export async function startFakeSuiUpstream(): Promise<FakeSuiUpstream> {
  const state: FakeSuiUpstream = { url: '', calls: [], mode: 'ok', close: async () => undefined };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const request = JSON.parse(body) as { id: unknown; method: string; params: unknown[] };
      state.calls.push(request.method);
      if (state.mode === 'trouble' && request.method !== 'sui_getLatestCheckpointSequenceNumber') {
        res.writeHead(500).end('upstream exploded');
        return;
      }
      const result =
        request.method === 'suix_getLatestSuiSystemState'
          ? RECORDED_SYSTEM_STATE
          : request.method === 'sui_tryMultiGetPastObjects'
            ? (request.params[0] as unknown[]).map(() => RECORDED_PAST_OBJECT)
            : request.method === 'sui_getLatestCheckpointSequenceNumber'
              ? '1000'
              : undefined;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          result === undefined
            ? {
                jsonrpc: '2.0',
                id: request.id,
                error: { code: -32601, message: 'method not found' },
              }
            : { jsonrpc: '2.0', id: request.id, result },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  state.url = `http://127.0.0.1:${address.port}`;
  // Ends kept-alive connections too: a gateway that keeps probing would hold close() open.
  state.close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return state;
}
