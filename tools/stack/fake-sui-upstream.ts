import { startFakeSuiUpstream } from '@meridian/testing';

/**
 * fake-sui-upstream for the local stack: network S has no node that runs here, so when
 * SUI_UPSTREAM_URLS is unset the shared endpoint relays to recorded responses (the spec's two S
 * methods; everything else -32601). Not a node: it says so at start. Args: <host> <port>.
 */
async function main(): Promise<void> {
  const [host, port] = process.argv.slice(2);
  if (!host || !port) throw new Error('usage: fake-sui-upstream <host> <port>');
  const fake = await startFakeSuiUpstream({ host, port: Number(port) });
  process.stdout.write(
    `fake-sui-upstream at ${fake.url}: recorded network S responses, not a node (set SUI_UPSTREAM_URLS for a real one)\n`,
  );
  const stop = () => void fake.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `fake-sui-upstream: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
