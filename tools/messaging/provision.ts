/**
 * Creates or updates the JetStream streams, durable consumers and KV buckets declared in
 * @meridian/contracts (like a migration; safe to run again: a second run changes nothing).
 *
 *   NATS_URL=nats://127.0.0.1:4222 NATS_PREFIX= node -r @swc-node/register tools/messaging/provision.ts
 *
 * Env: NATS_URL (default nats://127.0.0.1:4222) and the NATS credential and TLS files of
 * every app (NATS_CREDS_FILE, NATS_NKEY_SEED_FILE, NATS_TLS_*; ADR 0506), NATS_PREFIX (default
 * empty), NATS_REPLICAS
 * (default 1), MATCHER_PARTITIONS (default 1: webhook-matcher replicas, each reading the CHAIN
 * stream through a durable of its own, ADR 0422), DELIVERY_PARTITIONS (default 1:
 * delivery-worker replicas, each reading its route's jobs, ADR 0432). billing-ledger's usage
 * durables are one per usage partition whatever its replica count (ADR 0107). Exit code 0 on
 * success, 1 with one line on stderr otherwise.
 */
import { deploymentConsumers, partitionCountSetting } from '@meridian/contracts';
import {
  commonEnv,
  loadConfigOrExit,
  natsSettingsOf,
  transportEnv,
} from '@meridian/platform-config';
import { natsConnectOptions, provisionMessaging } from '@meridian/platform-messaging';
import { urlOrigin } from '@meridian/platform-observability';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { z } from 'zod';

const schema = z.object({
  NATS_URL: commonEnv.NATS_URL,
  NATS_PREFIX: commonEnv.NATS_PREFIX,
  NATS_CREDS_FILE: transportEnv.NATS_CREDS_FILE,
  NATS_NKEY_SEED_FILE: transportEnv.NATS_NKEY_SEED_FILE,
  NATS_TLS_CA_FILE: transportEnv.NATS_TLS_CA_FILE,
  NATS_TLS_CERT_FILE: transportEnv.NATS_TLS_CERT_FILE,
  NATS_TLS_KEY_FILE: transportEnv.NATS_TLS_KEY_FILE,
  NATS_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  MATCHER_PARTITIONS: partitionCountSetting,
  DELIVERY_PARTITIONS: partitionCountSetting,
});

async function main(): Promise<void> {
  const config = loadConfigOrExit(schema);
  const nc = await connect({
    ...natsConnectOptions(natsSettingsOf(config)),
    name: 'provision',
    timeout: 5_000,
  });
  try {
    const jsm = await jetstreamManager(nc);
    const consumers = deploymentConsumers({
      matcher: config.MATCHER_PARTITIONS,
      delivery: config.DELIVERY_PARTITIONS,
    });
    const report = await provisionMessaging(jsm, config.NATS_PREFIX, {
      replicas: config.NATS_REPLICAS,
      consumers,
    });
    const prefix = config.NATS_PREFIX ? ` (prefix ${config.NATS_PREFIX})` : '';
    process.stdout.write(`provisioned JetStream at ${urlOrigin(config.NATS_URL)}${prefix}\n`);
    for (const entry of report) {
      const changes = entry.changes ? ` [${entry.changes.join(', ')}]` : '';
      process.stdout.write(
        `  ${entry.kind.padEnd(8)} ${entry.name.padEnd(60)} ${entry.action}${changes}\n`,
      );
    }
  } finally {
    await nc.drain();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `provision failed: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
