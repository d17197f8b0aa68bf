import { DomainError } from '@meridian/errors';
import { z } from 'zod';
import { refusedAt } from '@meridian/webhooks';

/**
 * Optimistic concurrency on one webhook (ADR 0404): every answer carrying one webhook has
 * `ETag: "<version>"`, and PATCH, DELETE, pause and resume take an optional `If-Match` (RFC 9110
 * §13.1.1).
 * `any`: `*` (the webhook exists); otherwise the opaque values of the strong tags given (a weak
 * tag never matches: If-Match compares strongly).
 */
export type IfMatch = { any: true } | { any: false; tags: string[] };

/** The ETag of a webhook at `version`: strong, the decimal version quoted. */
export const etagOf = (version: number): string => `"${version}"`;

/** Longest If-Match read: a list of versions a client may hold fits many times over. */
const MAX_IF_MATCH_LENGTH = 2048;

/** `W/`? then a quoted run of etagc (%x21, %x23-7E, obs-text), RFC 9110 §8.8.3. */
const ENTITY_TAG = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/;

/**
 * The header as sent (`undefined`: none, so last write wins). Grammar: `*` or a comma-separated
 * list of entity-tags, empty elements and optional whitespace allowed (RFC 9110 §5.6.1);
 * anything else is 400 `invalid_if_match`. Repeated header lines are one list.
 */
export function parseIfMatch(header: string | string[] | undefined): IfMatch | null {
  if (header === undefined) return null;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.length > MAX_IF_MATCH_LENGTH)
    throw invalidIfMatch(`at most ${MAX_IF_MATCH_LENGTH} characters`);
  if (value.trim() === '*') return { any: true };
  const tags: string[] = [];
  let elements = 0;
  for (const element of value.split(',')) {
    const item = element.trim();
    if (item === '') continue;
    const match = ENTITY_TAG.exec(item);
    if (!match) throw invalidIfMatch('`*` or a list of entity-tags such as "3"');
    elements += 1;
    // A weak tag is well formed but never matches (strong comparison).
    if (match[1] === undefined) tags.push(match[2]!);
  }
  if (elements === 0) throw invalidIfMatch('`*` or a list of entity-tags such as "3"');
  return { any: false, tags };
}

/**
 * 412 `version_mismatch` unless `ifMatch` names `currentVersion` (or is `*`). Called under the
 * webhook's row lock, in the transaction that writes it.
 */
export function checkIfMatch(ifMatch: IfMatch | null, currentVersion: number): void {
  if (ifMatch === null || ifMatch.any) return;
  if (ifMatch.tags.includes(String(currentVersion))) return;
  const given = ifMatch.tags.map((t) => `"${t}"`).join(', ') || 'a weak entity-tag';
  throw new DomainError(
    'version_mismatch',
    'precondition_failed',
    `If-Match names ${given.length > 64 ? `${given.slice(0, 64)}…` : given} but the webhook ` +
      `is at version ${currentVersion}: ` +
      'read it again (GET) and apply the change to that version',
    { details: { details: { currentVersion } } },
  );
}

const invalidIfMatch = (expected: string) =>
  new DomainError('invalid_if_match', 'invalid', `If-Match: expected ${expected}`, {
    details: refusedAt('headers.if-match'),
  });

/** `/openapi.json`: the request header PATCH and DELETE of a webhook read. */
export const ifMatchHeader = {
  description:
    'Optional. `"<version>"` (the ETag of the webhook read), a comma-separated list of them, or ' +
    '`*`: the change is made only if the webhook is at one of those versions, else 412 ' +
    'version_mismatch (`details.currentVersion`). Left out: the change is made whatever the ' +
    'version (last write wins). Malformed: 400 invalid_if_match.',
  schema: z.string(),
};

/** `/openapi.json`: the header of every answer that carries one webhook. */
export const etagHeader = {
  description: 'The strong entity-tag of the webhook answered: `"<version>"` (its `version`).',
  schema: z.string().regex(/^"\d+"$/),
};
