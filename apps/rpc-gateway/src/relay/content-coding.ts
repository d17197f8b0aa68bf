import { brotliDecompress, gunzip, gzip, inflate, type InputType } from 'node:zlib';
import type { DomainError } from '@meridian/errors';
import { JSONRPC_ERROR } from '@meridian/jsonrpc';
import { refusal } from './gateway-errors';

/**
 * Content codings of the JSON-RPC edge over HTTP (rpc-gateway README "Compression"). An answer
 * of at least GZIP_MIN_BYTES goes gzipped to a client whose Accept-Encoding admits gzip: a block
 * with its transactions, a page of logs or a trace is hex-heavy JSON that shrinks 3-5x, and the
 * commercial providers compress. Smaller answers are sent as they are: under a few KiB the
 * header and the CPU cost more than the bytes saved. Level 1: most of the ratio for a fraction
 * of the default level's CPU, which the gateway spends per answer. A request body may come
 * gzip, deflate or br encoded; it is decoded up to the same body limit as a plain one.
 */
export const GZIP_MIN_BYTES = 16 * 1024;
const GZIP_LEVEL = 1;

/** Whether an Accept-Encoding header admits gzip (RFC 9110 §12.5.3: `gzip`, or `*`, q > 0). */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  if (typeof header !== 'string' || header.length === 0) return false;
  let star = false;
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.split(';');
    const coding = name.trim().toLowerCase();
    if (coding !== 'gzip' && coding !== 'x-gzip' && coding !== '*') continue;
    const q = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('q='));
    const admitted = q === undefined || Number(q.slice(2)) > 0;
    if (coding === '*') star = admitted;
    else return admitted;
  }
  return star;
}

/** The answer body, gzipped (never rejects: a failure sends it as it is). */
export function gzipped(body: string): Promise<Buffer | undefined> {
  return new Promise((resolve) =>
    gzip(body, { level: GZIP_LEVEL }, (error, out) => resolve(error ? undefined : out)),
  );
}

/** An encoded request body that decodes beyond the limit (a small gzip can hold gigabytes). */
export function decodedTooLarge(limitBytes: number, coding: string): DomainError {
  return refusal(
    'request_too_large',
    'too_large',
    `the request body decodes (${coding}) to more than ${limitBytes} bytes`,
  );
}

/**
 * The codings a request body may come in (DECODE; x-gzip is gzip's alias), as a 415 for another
 * coding lists them in its `Accept-Encoding` (RFC 9110 §12.5.3: a server SHOULD send it with a
 * 415 for an unsupported Content-Encoding, §15.5.16). A body without a coding is always read.
 */
export const REQUEST_CODINGS = 'gzip, deflate, br';

/**
 * A body in a coding the edge cannot read: the request as a whole cannot be read, so HTTP 415
 * (RFC 9110 §15.5.16 names Content-Encoding among its causes) with -32600 "invalid request",
 * code and message agreeing (QA: it was 400 with -32602 "invalid params" under the message
 * "invalid request"), and `Accept-Encoding: gzip, deflate, br` (relay.route.ts). Answered before
 * the token is checked, id null, like the other body checks.
 */
export const UNSUPPORTED_CONTENT_ENCODING = refusal(
  'unsupported_content_encoding',
  'invalid',
  `unsupported Content-Encoding; send the body as is, or gzip, deflate or br`,
  { details: { httpStatus: 415, jsonRpcCode: JSONRPC_ERROR.INVALID_REQUEST } },
);

type Decoder = (
  input: InputType,
  options: { maxOutputLength: number },
  done: (error: Error | null, out: Buffer) => void,
) => void;

/** Each coding a request body may come in, and its decoder. */
const DECODE: ReadonlyMap<string, Decoder> = new Map([
  ['gzip', gunzip],
  ['x-gzip', gunzip],
  ['deflate', inflate],
  ['br', brotliDecompress],
]);

/**
 * A request body under its Content-Encoding: the decoded text; `undefined` for a body that does
 * not decode (answered as any malformed body is: -32700); or the refusal (an unsupported coding,
 * a body that decodes beyond the limit).
 */
export function decodeBody(
  coding: string,
  body: Buffer,
  limitBytes: number,
): Promise<string | undefined | DomainError> {
  const name = coding.trim().toLowerCase();
  if (name === '' || name === 'identity') return Promise.resolve(body.toString('utf8'));
  const decode = DECODE.get(name);
  if (decode === undefined) return Promise.resolve(UNSUPPORTED_CONTENT_ENCODING);
  return new Promise((resolve) =>
    decode(body, { maxOutputLength: limitBytes }, (error, out) => {
      if (error === null) resolve(out.toString('utf8'));
      else if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
        resolve(decodedTooLarge(limitBytes, name));
      else resolve(undefined);
    }),
  );
}
