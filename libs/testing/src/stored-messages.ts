import type { JetStreamManager, StoredMsg } from '@nats-io/jetstream';

/** Attempts per message before a failing read fails the caller (a loaded CI machine times out). */
const READ_ATTEMPTS = 3;

/**
 * Every message a stream holds now, in stream order. A sequence with no message (deleted, or
 * trimmed by the stream's limits) is skipped; any other failure to read one is retried and then
 * thrown, never skipped: a test that reads the stream must see all of it or fail saying why.
 */
export async function storedMessages(jsm: JetStreamManager, stream: string): Promise<StoredMsg[]> {
  const { state } = await jsm.streams.info(stream);
  const out: StoredMsg[] = [];
  if (state.messages === 0) return out;
  for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
    const message = await readMessage(jsm, stream, seq);
    if (message) out.push(message);
  }
  return out;
}

async function readMessage(
  jsm: JetStreamManager,
  stream: string,
  seq: number,
): Promise<StoredMsg | null> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await jsm.streams.getMessage(stream, { seq });
    } catch (error) {
      if (attempt >= READ_ATTEMPTS) throw error;
    }
  }
}
