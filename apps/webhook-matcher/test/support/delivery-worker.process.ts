import {
  freePort,
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
 * Ready when its webhook-status mirror has loaded (`/readyz`).
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
  return {
    app,
    url,
    stop: async () => {
      await app.stop();
    },
  };
}
