import {
  freePort,
  messagingAttached,
  startAppProcess,
  testNatsUrl,
  type AppEnv,
  type AppProcess,
} from '@meridian/testing';

export interface RunningDeliveryWorker {
  readonly app: AppProcess;
  /** Its HTTP base URL (`/readyz`, `/metrics`). */
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * The real delivery-worker as a child process (never imported: apps share contracts, not code),
 * on the matcher test stack's NATS prefix, with its own migrated database, sending to loopback
 * receivers. `env` adds to or overrides the defaults (an `undefined` value removes a variable).
 * Ready when it serves (`/readyz`) and its consumer is attached and its KV mirrors (webhook
 * statuses, balances) loaded (`/metrics`: NATS is not part of `/readyz`, ADR 0212).
 */
export async function startDeliveryWorkerProcess(options: {
  databaseUrl: string;
  natsPrefix: string;
  env?: AppEnv;
}): Promise<RunningDeliveryWorker> {
  let url = '';
  const app = await startAppProcess(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    return {
      main: 'apps/delivery-worker/src/main.ts',
      env: {
        DATABASE_URL: options.databaseUrl,
        NATS_URL: testNatsUrl(),
        NATS_PREFIX: options.natsPrefix,
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(port),
        ALLOW_LOOPBACK_TARGETS: 'true',
        LOG_LEVEL: 'error',
        ...options.env,
      },
      healthUrl: `${url}/readyz`,
    };
  });
  const deadline = Date.now() + 60_000;
  while (!(await messagingAttached(url))) {
    if (Date.now() > deadline) {
      await app.stop();
      throw new Error(`delivery-worker: NATS consumers not attached in 60 s:\n${app.log()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    app,
    url,
    stop: async () => {
      await app.stop();
    },
  };
}
