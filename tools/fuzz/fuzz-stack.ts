import { startPrivateStack, type PrivateStack, type Route } from '../stack/private-stack';
import { GATEWAY_PROCESS, REST_APIS } from './rest-apis';

export type FuzzStack = PrivateStack;
export type { Route };

const DEVNETS = ['polygon-mainnet', 'eth-mainnet'];

/**
 * The real processes of the public edges, started by the stack launcher itself (the code of
 * `npm start`): billing-ledger, the gateway in front of anvil, audit-api, and every process of
 * REST_APIS; each on a free port, on a database and NATS namespace of its own (libs/testing).
 */
export function startFuzzStack(): Promise<FuzzStack> {
  return startPrivateStack({
    name: 'fuzz',
    apps: ['billing-ledger', GATEWAY_PROCESS, 'audit-api', ...REST_APIS.map((api) => api.process)],
    devnets: DEVNETS,
  });
}
