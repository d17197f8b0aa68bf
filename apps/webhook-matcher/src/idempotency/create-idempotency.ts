import { DomainError } from '@meridian/errors';

/**
 * The one rule of a create's `Idempotency-Key` (README "Idempotency-Key"), for every resource
 * created with one (webhooks, address lists). The key is stored on the created row with the
 * fingerprint of the request (`idempotency_request_hash`, `requestFingerprint` of
 * `@meridian/platform-http`), unique per account; the create looks it up under the account's
 * lock, so two requests with one key make one row.
 */
export interface KeyedRow {
  /** null: stored before fingerprints (webhooks before migration 1764400000000): any body. */
  idempotency_request_hash: string | null;
}

/**
 * What a create does with `first`, the row stored with its key (null: none yet): `create`, or
 * `replay` it when the stored fingerprint is one of `fingerprints` (the request's, under each
 * name it was ever stored by). Another request with the key is 409 `idempotency_key_reused`.
 */
export function idempotentCreate<Row extends KeyedRow>(
  first: Row | null,
  fingerprints: readonly string[],
  resource: string,
): { replay: Row } | { replay: null } {
  if (first === null) return { replay: null };
  // A key names one request (IETF idempotency-key draft, Stripe): another body with it is
  // refused, never answered with the first resource.
  if (
    first.idempotency_request_hash !== null &&
    !fingerprints.includes(first.idempotency_request_hash)
  )
    throw idempotencyKeyOfAnotherRequest(resource);
  return { replay: first };
}

/**
 * The key with a different request. 409 like billing-ledger's top-up keys and a deleted
 * webhook's key: the draft suggests 422, which no error kind maps to.
 */
export const idempotencyKeyOfAnotherRequest = (resource: string) =>
  new DomainError(
    'idempotency_key_reused',
    'conflict',
    `this Idempotency-Key was used with a different request; send a new key for a new ${resource}`,
  );
