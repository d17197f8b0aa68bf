import { notServingReason, type ServingState } from './serving-readiness';

const up = (network: string, upstreams: number, healthy: number) => ({
  network,
  upstreams,
  healthy,
});
const state = (networks: ServingState['networks'], edge: Partial<ServingState> = {}) => ({
  listening: true,
  closing: false,
  networks,
  ...edge,
});

describe('notServingReason (gateway readiness, ADR 0212)', () => {
  it.each<[string, ServingState, string | undefined]>([
    [
      'every network healthy',
      state([up('eth-mainnet', 2, 2), up('polygon-mainnet', 1, 1)]),
      undefined,
    ],
    [
      'one network with every node down: still ready (the others are served)',
      state([up('eth-mainnet', 2, 2), up('eth-hoodi', 1, 0)]),
      undefined,
    ],
    [
      'all but one network down',
      state([up('eth-mainnet', 2, 0), up('eth-hoodi', 1, 0), up('polygon-mainnet', 3, 1)]),
      undefined,
    ],
    [
      'no offered network has a healthy node',
      state([up('eth-mainnet', 2, 0), up('eth-hoodi', 1, 0)]),
      'no healthy upstream for any network (eth-mainnet, eth-hoodi)',
    ],
    [
      'a network with no upstream configured is not offered',
      state([up('eth-mainnet', 0, 0), up('sui-mainnet', 1, 1)]),
      undefined,
    ],
    [
      'only unconfigured networks left down',
      state([up('eth-mainnet', 0, 0), up('sui-mainnet', 1, 0)]),
      'no healthy upstream for any network (sui-mainnet)',
    ],
    [
      'no upstream configured at all: serves no network, not ready',
      state([]),
      'no network served: UPSTREAMS and SUI_UPSTREAM_URLS name no node for a network this endpoint offers',
    ],
    [
      'only networks with an empty node list',
      state([up('eth-mainnet', 0, 0)]),
      'no network served: UPSTREAMS and SUI_UPSTREAM_URLS name no node for a network this endpoint offers',
    ],
    [
      'HTTP edge not listening',
      state([up('eth-mainnet', 1, 1)], { listening: false }),
      'HTTP edge not listening',
    ],
    [
      'shutting down',
      state([up('eth-mainnet', 1, 1)], { closing: true, listening: false }),
      'shutting down',
    ],
  ])('%s', (_name, input, expected) => {
    expect(notServingReason(input)).toBe(expected);
  });
});
