import { randomBytes } from 'node:crypto';
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
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
 * The part of a JetStreamManager the namespace cleanup uses. A real `JetStreamManager` is one; a
 * test can interpose on it to interleave other clients' deletes with the cleanup's own calls.
 */
export interface NatsNamespaceCleanupApi {
  readonly streams: {
    names(): AsyncIterable<string>;
    delete(stream: string): Promise<boolean>;
  };
  readonly consumers: {
    list(stream: string): AsyncIterable<{ readonly name: string }>;
    delete(stream: string, consumer: string): Promise<boolean>;
  };
}

function isApiError(error: unknown, ...codes: number[]): boolean {
  return error instanceof JetStreamApiError && codes.includes(error.code);
}

/**
 * Removes everything a test created under `prefix`: KV buckets (streams `KV_<bucket>`), object
 * stores (`OBJ_<name>`), streams, and consumers named with the prefix on streams that are not
 * (e.g. a test's durable on a shared stream). Consumers of a deleted stream go with it.
 *
 * Only streams whose names start with the prefix (or `KV_`/`OBJ_` + prefix) are deleted, and only
 * consumers whose names start with it. Other test files clean up their own namespaces on the same
 * server at the same time, so any stream or consumer may vanish between being listed and being
 * used (its consumers listed, or it deleted): that is not an error (it is gone, as wanted) and is
 * not reported as deleted by this call.
 */
export async function deleteNatsNamespace(
  url: string,
  prefix: string,
): Promise<DeletedNatsNamespace> {
  // The sweep refuses an empty prefix (it would match everything).
  const nc = await connect({ servers: url, name: `test-cleanup-${prefix}` });
  try {
    return await sweepNatsNamespace(await jetstreamManager(nc), prefix);
  } finally {
    await nc.close();
  }
}

/** {@link deleteNatsNamespace} over an existing JetStream manager. */
export async function sweepNatsNamespace(
  jsm: NatsNamespaceCleanupApi,
  prefix: string,
): Promise<DeletedNatsNamespace> {
  if (prefix.length === 0)
    throw new Error('refusing to delete with an empty prefix (it would match everything)');
  const deleted = { streams: [] as string[], consumers: [] as string[], buckets: [] as string[] };

  const streamNames: string[] = [];
  for await (const name of jsm.streams.names()) streamNames.push(name);

  for (const name of streamNames) {
    const bucket = name.startsWith(`KV_${prefix}`) ? name.slice('KV_'.length) : undefined;
    if (bucket !== undefined || name.startsWith(prefix) || name.startsWith(`OBJ_${prefix}`)) {
      try {
        await jsm.streams.delete(name);
      } catch (error) {
        if (isApiError(error, JetStreamApiCodes.StreamNotFound)) continue;
        throw error;
      }
      if (bucket !== undefined) deleted.buckets.push(bucket);
      else deleted.streams.push(name);
      continue;
    }

    // Another namespace's (or a shared) stream: only our own durables on it are ours to remove.
    const ours: string[] = [];
    try {
      for await (const consumer of jsm.consumers.list(name))
        if (consumer.name.startsWith(prefix)) ours.push(consumer.name);
    } catch (error) {
      if (isApiError(error, JetStreamApiCodes.StreamNotFound)) continue;
      throw error;
    }
    for (const consumer of ours) {
      try {
        await jsm.consumers.delete(name, consumer);
      } catch (error) {
        if (isApiError(error, JetStreamApiCodes.StreamNotFound, JetStreamApiCodes.ConsumerNotFound))
          continue;
        throw error;
      }
      deleted.consumers.push(`${name}/${consumer}`);
    }
  }
  return deleted;
}
