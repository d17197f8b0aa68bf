/**
 * The least HTTP/1.1 a benchmark instrument needs, on raw sockets: split a byte stream into
 * messages (header block + a body framed by Content-Length or chunked encoding). The bench's
 * load generator and canned upstream use it instead of node:http/undici so that they spend a few
 * µs per request and leave the CPUs to the path under test. Not a general parser: no trailers,
 * no bodies framed by connection close, header names matched case-insensitively by substring.
 */
export interface WireMessage {
  /** The start line and headers, latin1, without the final CRLF CRLF. */
  head: string;
  body: Buffer;
}

const CRLF2 = Buffer.from('\r\n\r\n');

/** Accumulates chunks and yields every complete message, in order. */
export class MessageSplitter {
  private buffered: Buffer = Buffer.alloc(0);

  push(chunk: Buffer, onMessage: (message: WireMessage) => void): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    for (;;) {
      const message = this.next();
      if (!message) return;
      onMessage(message);
    }
  }

  private next(): WireMessage | undefined {
    const buf = this.buffered;
    const headEnd = buf.indexOf(CRLF2);
    if (headEnd < 0) return undefined;
    const head = buf.toString('latin1', 0, headEnd);
    const bodyStart = headEnd + 4;
    const lower = head.toLowerCase();
    const lengthAt = lower.indexOf('\ncontent-length:');
    if (lengthAt >= 0) {
      const lineEnd = lower.indexOf('\r', lengthAt + 1);
      const length = Number.parseInt(
        lower.slice(lengthAt + 16, lineEnd < 0 ? undefined : lineEnd),
        10,
      );
      if (buf.length < bodyStart + length) return undefined;
      this.buffered = buf.subarray(bodyStart + length);
      return { head, body: buf.subarray(bodyStart, bodyStart + length) };
    }
    if (lower.includes('\ntransfer-encoding: chunked')) {
      const parts: Buffer[] = [];
      let at = bodyStart;
      for (;;) {
        const lineEnd = buf.indexOf('\r\n', at);
        if (lineEnd < 0) return undefined;
        const size = Number.parseInt(buf.toString('latin1', at, lineEnd), 16);
        if (buf.length < lineEnd + 2 + size + 2) return undefined;
        if (size === 0) {
          this.buffered = buf.subarray(lineEnd + 4);
          return { head, body: Buffer.concat(parts) };
        }
        parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
      }
    }
    this.buffered = buf.subarray(bodyStart);
    return { head, body: Buffer.alloc(0) };
  }
}

/** The status code of a response's head (`HTTP/1.1 200 OK` → 200). */
export function statusOf(head: string): number {
  return Number(head.slice(9, 12));
}
