import { join } from 'node:path';
import type { StackLayout } from './layout';
import { answers, waitFor } from './probe';
import type { ProcessGroup } from './process-group';
import { anvilBinaryPath } from '@meridian/testing';

export interface RunningDevnet {
  network: string;
  chainId: number;
  url: string;
}

/**
 * One anvil devnet standing in for a relayed network. Its state is dumped to the stack
 * directory on exit (and every `stateIntervalSeconds` when set) and loaded on the next start,
 * so balances, contracts and blocks persist.
 */
export async function startDevnet(
  group: ProcessGroup,
  layout: StackLayout,
  devnet: StackLayout['devnets'][number],
): Promise<RunningDevnet> {
  const url = `http://${layout.host}:${devnet.port}`;
  if (await answers(layout.host, devnet.port))
    throw new Error(`port ${devnet.port} for devnet ${devnet.network} is taken`);
  const state = join(layout.dir, `anvil-${devnet.chainId}.json`);
  group.start(`anvil-${devnet.chainId}`, anvilBinaryPath(), [
    '--host',
    layout.host,
    '--port',
    String(devnet.port),
    '--chain-id',
    String(devnet.chainId),
    '--block-time',
    '1',
    '--state',
    state,
    ...(devnet.stateIntervalSeconds === undefined
      ? []
      : ['--state-interval', String(devnet.stateIntervalSeconds)]),
    '--silent',
  ]);
  await waitFor(`devnet ${devnet.network}`, () => answers(layout.host, devnet.port), 30_000);
  return { network: devnet.network, chainId: devnet.chainId, url };
}
