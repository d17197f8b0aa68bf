import { startPrivateStack, type PrivateStackOptions } from './private-stack';

/**
 * A private stack (startPrivateStack) as a process of its own, for code outside `tools/` that
 * may not import the launcher (benchmarks; module boundaries): the options come as JSON in
 * argv[2]; once the stack is up, one line `{"endpoints", "natsUrl", "natsPrefix"}` goes to stdout; SIGTERM or SIGINT
 * stops it and removes its database, NATS namespace and temp dir. A stack that fails to start
 * prints `{"error": …}` and exits 1.
 */
async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as PrivateStackOptions;
  const stack = await startPrivateStack(options);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await stack.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  const { natsUrl, natsPrefix } = stack.layout;
  process.stdout.write(`${JSON.stringify({ endpoints: stack.endpoints, natsUrl, natsPrefix })}\n`);
}

main().catch((error: unknown) => {
  process.stdout.write(
    `${JSON.stringify({ error: error instanceof Error ? error.message : String(error) })}\n`,
  );
  process.exit(1);
});
