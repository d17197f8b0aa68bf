import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';

export const DEFAULT_TEST_NATS_URL = 'nats://127.0.0.1:4222';

export function testNatsUrl(): string {
  return process.env.TEST_NATS_URL || process.env.NATS_URL || DEFAULT_TEST_NATS_URL;
}

const PREFIX_LENGTH = 10;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A random prefix valid as a subject token and inside stream, consumer and KV bucket names
 * (letters and digits, starting with a letter; passes NATS_PREFIX validation). All prefixes have
 * the same length, so one can never be the start of another.
 */
export function uniqueNatsPrefix(): string {
  const bytes = randomBytes(PREFIX_LENGTH - 1);
  let prefix = 't';
  for (const byte of bytes) prefix += ALPHABET[byte % ALPHABET.length];
  return prefix;
}

export interface DeletedNatsNamespace {
  readonly streams: readonly string[];
  readonly consumers: readonly string[];
  readonly buckets: readonly string[];
}

/**
 * Removes everything a test created under `prefix`: KV buckets (streams `KV_<bucket>`), object
 * stores (`OBJ_<name>`), streams, and consumers named with the prefix on streams that are not
 * (e.g. a test's durable on a shared stream). Consumers of a deleted stream go with it.
 */
export async function deleteNatsNamespace(
  url: string,
  prefix: string,
): Promise<DeletedNatsNamespace> {
  if (prefix.length === 0)
    throw new Error('refusing to delete with an empty prefix (it would match everything)');
  const nc = await connect({ servers: url, name: `test-cleanup-${prefix}` });
  const deleted = { streams: [] as string[], consumers: [] as string[], buckets: [] as string[] };
  try {
    const jsm = await jetstreamManager(nc);

    for await (const status of new Kvm(nc).list()) {
      if (status.bucket.startsWith(prefix)) {
        await jsm.streams.delete(status.streamInfo.config.name);
        deleted.buckets.push(status.bucket);
      }
    }

    const streamNames: string[] = [];
    for await (const name of jsm.streams.names()) streamNames.push(name);
    for (const name of streamNames) {
      if (
        name.startsWith(prefix) ||
        name.startsWith(`KV_${prefix}`) ||
        name.startsWith(`OBJ_${prefix}`)
      ) {
        if (deleted.buckets.some((bucket) => name === `KV_${bucket}`)) continue;
        await jsm.streams.delete(name);
        deleted.streams.push(name);
        continue;
      }
      for await (const consumer of jsm.consumers.list(name)) {
        if (consumer.name.startsWith(prefix)) {
          await jsm.consumers.delete(name, consumer.name);
          deleted.consumers.push(`${name}/${consumer.name}`);
        }
      }
    }
  } finally {
    await nc.close();
  }
  return deleted;
}
