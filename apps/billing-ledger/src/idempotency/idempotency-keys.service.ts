import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import type { EntityManager } from 'typeorm';
import type { Clock } from '@meridian/time';
import { CLOCK } from '../clock/clock.token';
import { IdempotencyKeysRepository } from './idempotency-keys.repository';
import { requestFingerprint } from '@meridian/platform-http';

export const IDEMPOTENCY_KEY_REUSED = 'idempotency_key_reused';

/**
 * `Idempotency-Key` as Stripe and draft-ietf-httpapi-idempotency-key-header have it: a key
 * names one request. Its first use binds it to that request's fingerprint; a retry of the same
 * request goes on (and the operation answers its first result), a different request with the
 * key is refused with 409 `idempotency_key_reused` (README, "REST API").
 */
@Injectable()
export class IdempotencyKeys {
  constructor(
    private readonly repository: IdempotencyKeysRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * `manager`: bound in the caller's transaction, for a key whose account the request itself
   * makes (`POST /admin/accounts`: the key goes into the new account's key space with it).
   */
  async claim(
    accountId: string,
    key: string,
    operation: string,
    request: unknown,
    manager?: EntityManager,
  ): Promise<void> {
    await this.bind(accountId, key, operation, request, manager);
  }

  /**
   * For a create whose answer is not kept (its secret is shown once): binds the key in the
   * caller's transaction, before anything is made, and answers the id of what the key's first
   * use made, or null when this is its first use (the caller makes the object and
   * `recordResult`s it in the same transaction). A concurrent request with the key waits for
   * that transaction: it then finds the id, or, if that one rolled back, binds the key itself.
   */
  async claimCreate(
    manager: EntityManager,
    accountId: string,
    key: string,
    operation: string,
    request: unknown,
  ): Promise<string | null> {
    const bound = await this.bind(accountId, key, operation, request, manager);
    // A row bound to this request always has its result: it is written in the binding's
    // transaction. Missing, the key was bound by something that records none; refuse it.
    if (!bound.first && bound.resultId === null) throw reused();
    return bound.resultId;
  }

  recordResult(
    manager: EntityManager,
    accountId: string,
    key: string,
    resultId: string,
  ): Promise<void> {
    return this.repository.recordResult(manager, accountId, key, resultId);
  }

  private async bind(
    accountId: string,
    key: string,
    operation: string,
    request: unknown,
    manager?: EntityManager,
  ) {
    const fingerprint = requestFingerprint(operation, request);
    const bound = await this.repository.bind(
      accountId,
      key,
      fingerprint,
      this.clock.now(),
      manager,
    );
    if (bound.requestHash !== fingerprint) throw reused();
    return bound;
  }
}

const reused = () =>
  new DomainError(
    IDEMPOTENCY_KEY_REUSED,
    'conflict',
    'this Idempotency-Key was already used with a different request; use a new key',
  );
