import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { base58, base64 } from '@scure/base';

/**
 * fake-sui-upstream: a recorded-response stand-in for a network S node (there is no S node to
 * run here, and no internet). Answers the spec's two S methods with recorded JSON in the spec's
 * shapes (`sui_tryMultiGetPastObjects`: one answer per ref asked, `pastObjectAnswer`), and the
 * gateway's health probe; every other method is -32601, a body that is not JSON
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

/** An object id no object ever had here: answered ObjectNotExists, as a node does. */
export const MISSING_OBJECT_ID = `0x${'0'.repeat(64)}`;
const COIN_TYPE = '0x2::coin::Coin<0x2::sui::SUI>';
const OWNER = `0x${'a'.repeat(64)}`;

/** A base58 digest (32 bytes), the same for the same text: what a node's digests look like. */
function digestOf(text: string): string {
  return base58.encode(createHash('sha256').update(text).digest());
}

/**
 * A node's answer (SuiPastObjectResponse) for one ref of `sui_tryMultiGetPastObjects`: a
 * `VersionFound` of a SUI coin at the version asked, its objectId normalised to 32 bytes of hex
 * as a node writes it, with a digest, and the fields the options ask for (ObjectDataOptions);
 * `ObjectNotExists` for MISSING_OBJECT_ID (or an id that is not hex). A ref the gateway would
 * not relay is answered as a node might, without checks of its own.
 */
export function pastObjectAnswer(ref: unknown, options: unknown): unknown {
  const { objectId, version } = (ref ?? {}) as { objectId?: unknown; version?: unknown };
  const hex = typeof objectId === 'string' ? /^0x([0-9a-fA-F]{1,64})$/.exec(objectId) : null;
  const id = hex === null ? String(objectId) : `0x${hex[1]!.toLowerCase().padStart(64, '0')}`;
  if (hex === null || id === MISSING_OBJECT_ID) return { status: 'ObjectNotExists', details: id };
  const at = String(version);
  const show = (options ?? {}) as Record<string, unknown>;
  const details: Record<string, unknown> = {
    objectId: id,
    version: at,
    digest: digestOf(`${id}:${at}`),
  };
  if (show.showType === true) details.type = COIN_TYPE;
  if (show.showOwner === true) details.owner = { AddressOwner: OWNER };
  if (show.showPreviousTransaction === true) details.previousTransaction = digestOf(`tx:${id}`);
  if (show.showStorageRebate === true) details.storageRebate = '988000';
  if (show.showDisplay === true) details.display = { data: null, error: null };
  if (show.showContent === true)
    details.content = {
      dataType: 'moveObject',
      type: COIN_TYPE,
      hasPublicTransfer: true,
      fields: { balance: '1000000000', id: { id } },
    };
  if (show.showBcs === true)
    details.bcs = {
      dataType: 'moveObject',
      type: COIN_TYPE,
      hasPublicTransfer: true,
      version: Number(at),
      bcsBytes: base64.encode(createHash('sha256').update(id).digest()),
    };
  return { status: 'VersionFound', details };
}

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
          ? params[0].map((ref) => pastObjectAnswer(ref, params[1]))
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
