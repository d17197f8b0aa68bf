import { DomainError } from '@meridian/errors';

/**
 * 403 `owner_required` (ADR 0604), the one wording of every refusal of a member: `what` is what
 * only an owner does ("manages its team", "changes its plan"). `fields`: the form's fields the
 * refusal is about (the API key's `scopes`), so the page says it under them.
 */
export const ownerRequired = (what: string, fields?: Record<string, string>) =>
  new DomainError(
    'owner_required',
    'forbidden',
    `only an owner of the account ${what}; ask one of the account's owners`,
    fields ? { details: { fields } } : undefined,
  );

/** What a plan change is called in the refusal: the relay's `ownerOnly`, a `plan`-scope key. */
export const CHANGES_ITS_PLAN = 'changes its plan';
