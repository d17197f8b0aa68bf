import { DomainError } from '@meridian/errors';

export const ALREADY_CREATED = 'already_created';

/**
 * The answer to a repeat of a credential create with its `Idempotency-Key` (ADR 0110 amendment
 * "Credential creates take an Idempotency-Key"): 409 `already_created` naming what the key's
 * first use made (`id`, `credential`: its view without the secret, `active`: whether it still is),
 * never a second credential. The secret was shown once, in the first answer, and is stored only
 * as a hash, so it cannot be answered again; `next` says how to get one that can be.
 */
export function alreadyCreated(
  what: 'access token' | 'API key',
  view: { id: string },
  active: boolean,
  next: string,
): DomainError {
  return new DomainError(
    ALREADY_CREATED,
    'conflict',
    `this Idempotency-Key already made ${what} ${view.id}${active ? '' : ' (no longer active)'}; ` +
      `its secret was shown once, in that answer, and is not stored: ${next}`,
    { details: { id: view.id, active, credential: view } },
  );
}
