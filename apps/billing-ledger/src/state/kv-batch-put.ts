import { PubAckBatch } from '@meridian/platform-messaging';
import type { NatsConnection } from '@nats-io/transport-node';

/** KV keys as `@nats-io/kv` validates them. */
const KEY = /^[-/=.\w]+$/;

/**
 * Puts many entries into a KV bucket at once: each is a plain publish to `$KV.<bucket>.<key>`
 * (what `kv.put` sends), its PubAck counted by the shared `PubAckBatch` instead of a request per
 * key (ADR 0104). A pass fails as a whole (and is put again by the caller) when any put fails;
 * a KV put is idempotent, so putting a whole pass again is safe.
 */
export class KvBatchPut {
  private readonly batch = new PubAckBatch();

  put(
    nc: NatsConnection,
    bucket: string,
    entries: ReadonlyArray<readonly [key: string, value: string]>,
    timeoutMs: number,
  ): Promise<void> {
    for (const [key] of entries)
      if (!KEY.test(key)) return Promise.reject(new Error(`invalid KV key ${JSON.stringify(key)}`));
    const prefix = `$KV.${bucket}.`;
    return this.batch
      .publishAll(
        nc,
        entries.map(([key, value]) => ({ subject: prefix + key, data: value })),
        timeoutMs,
      )
      .catch((error: Error) => {
        throw new Error(`KV ${bucket}: put failed: ${error.message}`, { cause: error });
      });
  }
}
