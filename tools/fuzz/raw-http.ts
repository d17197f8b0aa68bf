import { connect } from 'node:net';

export interface RawRequest {
  method: string;
  /** Sent as is (already percent-encoded where needed). */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export type RawOutcome =
  | { kind: 'answer'; status: number; headers: Record<string, string>; body: string }
  | { kind: 'dropped'; error: string }
  | { kind: 'hang' };

/**
 * One HTTP/1.1 request on a fresh TCP connection, written byte for byte (no client refuses or
 * rewrites a path or header), then everything the server sends until it closes. A server may
 * answer before it has read a large body and close: the answer still counts, so write errors are
 * ignored. "dropped": the connection closed with no status line; "hang": nothing within the
 * timeout.
 */
export function rawRequest(
  base: string,
  options: RawRequest,
  timeoutMs = 10_000,
): Promise<RawOutcome> {
  const url = new URL(base);
  const body =
    options.body === undefined
      ? undefined
      : Buffer.isBuffer(options.body)
        ? options.body
        : Buffer.from(options.body, 'utf8');
  const lines = [
    `${options.method} ${options.path} HTTP/1.1`,
    `host: ${url.host}`,
    'connection: close',
  ];
  for (const [name, value] of Object.entries(options.headers ?? {}))
    lines.push(`${name}: ${value}`);
  if (body !== undefined) lines.push(`content-length: ${body.length}`);
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    const socket = connect(Number(url.port), url.hostname);
    const done = (outcome: RawOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => done({ kind: 'hang' }), timeoutMs);
    socket.on('connect', () => {
      socket.write(head);
      if (body !== undefined) socket.write(body);
    });
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const parsed = parseResponse(Buffer.concat(chunks), options.method === 'HEAD');
      if (parsed) done(parsed);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const received = Buffer.concat(chunks);
      const parsed = parseResponse(received, options.method === 'HEAD', true);
      done(
        parsed ?? {
          kind: 'dropped',
          error:
            received.length === 0
              ? 'closed with no bytes'
              : `closed after ${received.length} bytes that are no HTTP answer: ${received.subarray(0, 120).toString('latin1')}`,
        },
      );
    });
  });
}

/** A complete answer in `bytes` (content-length, chunked, or all bytes once the peer closed). */
function parseResponse(bytes: Buffer, noBody: boolean, closed = false): RawOutcome | undefined {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...headerLines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '');
  if (!match) return undefined;
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon > 0)
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = bytes.subarray(end + 4);
  const status = Number(match[1]);
  const answer = (body: Buffer): RawOutcome => ({
    kind: 'answer',
    status,
    headers,
    body: body.toString('utf8'),
  });
  if (noBody || status === 101 || status === 204 || status === 304) return answer(Buffer.alloc(0));
  const length = headers['content-length'];
  if (length !== undefined) {
    return rest.length >= Number(length) ? answer(rest.subarray(0, Number(length))) : undefined;
  }
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const body = dechunk(rest);
    return body ? answer(body) : closed ? answer(rest) : undefined;
  }
  return closed ? answer(rest) : undefined;
}

function dechunk(bytes: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', offset);
    if (lineEnd < 0) return undefined;
    const size = parseInt(bytes.subarray(offset, lineEnd).toString('latin1'), 16);
    if (Number.isNaN(size)) return undefined;
    if (size === 0) return Buffer.concat(parts);
    if (bytes.length < lineEnd + 2 + size + 2) return undefined;
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
}

/** Why an outcome breaks the pass rule (no 5xx, no hang, no drop), or undefined when it holds. */
export function violationOf(outcome: RawOutcome): string | undefined {
  if (outcome.kind === 'hang') return 'no answer within the timeout (hang)';
  if (outcome.kind === 'dropped') return `connection dropped without an answer: ${outcome.error}`;
  if (outcome.status >= 500) return `answered ${outcome.status}: ${outcome.body.slice(0, 500)}`;
  return undefined;
}

/** A REST error answer must be COMPAT's body: {"error": code, "message", "request_id", …}. */
export function restBodyViolationOf(outcome: RawOutcome): string | undefined {
  if (outcome.kind !== 'answer' || outcome.status < 400) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(outcome.body);
  } catch {
    return `error answer ${outcome.status} is not JSON: ${outcome.body.slice(0, 200)}`;
  }
  const record = body as Record<string, unknown> | null;
  if (
    typeof record?.['error'] !== 'string' ||
    typeof record['message'] !== 'string' ||
    typeof record['request_id'] !== 'string'
  )
    return `error answer ${outcome.status} is not {"error","message","request_id"}: ${outcome.body.slice(0, 200)}`;
  return undefined;
}
