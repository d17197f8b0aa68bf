import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import { checkListCreate, checkListResize, checkListSize } from '@meridian/plans';
import type { Clock } from '@meridian/time';
import { normalizeAddresses, refusalWithoutPlan } from '@meridian/webhooks';
import { DataSource, type EntityManager } from 'typeorm';
import { AccountWrites } from '../accounts/account-writes';
import { AccountsRepository } from '../accounts/accounts.repository';
import {
  CREDENTIAL_SOURCE,
  type AccountFacts,
  type CredentialSource,
} from '../auth/credential-source';
import { CLOCK } from '../common/clock.token';
import { newId } from '../http/ids';
import { recordChange } from '../status/change-log';
import { planRequiredOf, webhookCapsOf } from '../status/status.service';
import { WebhooksRepository } from '../webhooks/webhooks.repository';
import { AddressListsRepository, type AddressListRow } from './address-lists.repository';
import { prefixRange } from './address-list.schemas';
import { requestFingerprint } from '@meridian/platform-http';
import { idempotentCreate } from '../idempotency/create-idempotency';

/** The operation an address list create's Idempotency-Key fingerprint is taken under. */
const CREATE_LIST_FINGERPRINT = 'create-address-list';

const listNotFound = () => new DomainError('not_found', 'not_found', 'no such address list');

/**
 * All lower, all upper or EIP-55 in (ADR 0403), lower case stored; duplicates inside one request
 * collapse; a refused entry refuses the request, the 400 naming every refused one.
 */
const normalizeAll = (addresses: readonly string[]): string[] =>
  normalizeAddresses(addresses, 'body.addresses');

@Injectable()
export class AddressListsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly writes: AccountWrites,
    private readonly lists: AddressListsRepository,
    private readonly webhooks: WebhooksRepository,
    private readonly accounts: AccountsRepository,
    @Inject(CREDENTIAL_SOURCE) private readonly credentials: CredentialSource,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * 201 + the list. With an Idempotency-Key (README "Idempotency-Key"), a repeat of the request
   * answers the list it made, as it is now; the key with another request is 409
   * `idempotency_key_reused`. Looked up under the account's lock: one key, one list.
   */
  async create(
    accountId: string,
    name: string,
    addresses: readonly string[],
    idempotencyKey: string | null = null,
  ): Promise<AddressListRow> {
    const entries = normalizeAll(addresses);
    // The list asked for as it is stored: name trimmed (zod), addresses lower case, a set.
    const requestHash =
      idempotencyKey === null
        ? null
        : requestFingerprint(CREATE_LIST_FINGERPRINT, { name, addresses: [...entries].sort() });
    const fresh = await this.credentials.accountFacts(accountId);
    return this.writes.transaction(accountId, async (m) => {
      const facts = await this.accounts.lockWith(m, fresh);
      if (idempotencyKey !== null) {
        const first = await this.lists.findByIdempotencyKey(m, accountId, idempotencyKey);
        const { replay } = idempotentCreate(first, [requestHash!], 'address list');
        if (replay) return replay;
      }
      checkListCreate(webhookCapsOf(facts), await this.lists.count(m, accountId));
      // Known before any row is written: a list over the cap is refused without inserting it.
      checkListSize(webhookCapsOf(facts), entries.length);
      const list = await this.lists.insert(m, {
        id: newId('al'),
        accountId,
        name,
        idempotencyKey,
        idempotencyRequestHash: requestHash,
        now: this.clock.now(),
      });
      const added = await this.lists.addEntries(m, list.id, entries);
      await this.checkResize(m, facts, list.id, added);
      await recordChange(m, { accountId, listId: list.id });
      return this.lists.setInitialCount(m, list.id, added);
    });
  }

  async get(accountId: string, id: string): Promise<AddressListRow> {
    const row = await this.lists.find(this.dataSource.manager, accountId, id);
    if (!row) throw listNotFound();
    return row;
  }

  async page(accountId: string, limit: number, cursor: string | undefined) {
    const rows = await this.lists.page(
      this.dataSource.manager,
      accountId,
      limit + 1,
      cursor ?? null,
    );
    const items = rows.slice(0, limit);
    return { items, nextCursor: rows.length > limit ? items.at(-1)!.seq : null };
  }

  async rename(accountId: string, id: string, name: string): Promise<AddressListRow> {
    // In the account's turn although it locks only the list's row: renames of one list sent at
    // once would otherwise hold a pooled connection each while they wait for that row.
    return this.writes.transaction(accountId, async (m) => {
      const list = await this.lists.find(m, accountId, id, true);
      if (!list) throw listNotFound();
      // A rename to the name it has changes nothing: version and updated_at stay.
      if (list.name === name) return list;
      return this.lists.rename(m, id, name, this.clock.now());
    });
  }

  async delete(accountId: string, id: string): Promise<void> {
    await this.writes.transaction(accountId, async (m) => {
      await this.accounts.lock(m, accountId);
      const list = await this.lists.find(m, accountId, id, true);
      if (!list) throw listNotFound();
      const users = await this.lists.referencingWebhooks(m, id);
      if (users.length > 0)
        throw new DomainError(
          'list_in_use',
          'conflict',
          `the list is referenced by ${users.length} webhook(s); remove it from them first`,
          {
            details: { webhook_ids: users.slice(0, 50) },
          },
        );
      await this.lists.delete(m, id);
      await recordChange(m, { accountId, listId: id });
    });
  }

  /** A page of the list's entries in address order; with `prefix`, of those starting with it. */
  async entries(
    accountId: string,
    id: string,
    limit: number,
    cursor: string | undefined,
    prefix?: string,
  ) {
    await this.get(accountId, id);
    const rows = await this.lists.entries(
      this.dataSource.manager,
      id,
      limit + 1,
      cursor ?? null,
      prefix === undefined ? null : prefixRange(prefix),
    );
    const items = rows.slice(0, limit);
    return { items, nextCursor: rows.length > limit ? items.at(-1)! : null };
  }

  /** add (duplicates ignored), replace, remove: one transaction, caps re-checked for every user of the list. */
  async changeEntries(
    accountId: string,
    id: string,
    mode: 'add' | 'replace' | 'remove',
    addresses: readonly string[],
  ): Promise<{ list: AddressListRow; added: number; removed: number }> {
    const entries = normalizeAll(addresses);
    const fresh = mode === 'remove' ? null : await this.credentials.accountFacts(accountId);
    return this.writes.transaction(accountId, async (m) => {
      const facts = fresh
        ? await this.accounts.lockWith(m, fresh)
        : await this.accounts.lock(m, accountId);
      const list = await this.lists.find(m, accountId, id, true);
      if (!list || !facts) throw listNotFound();
      let added = 0;
      let removed = 0;
      if (mode === 'replace') checkListSize(webhookCapsOf(facts), entries.length);
      if (mode === 'remove') removed = await this.lists.removeEntries(m, id, entries);
      else {
        if (mode === 'replace') removed = await this.lists.removeAllExcept(m, id, entries);
        added = await this.lists.addEntries(m, id, entries);
      }
      // Nothing added or removed (duplicates only, a replace by the same set): no write, so
      // version and updated_at move only on a real change, and the matcher's feed stays quiet.
      if (added === 0 && removed === 0) return { list, added, removed };
      const size = list.entry_count + added - removed;
      if (added > 0) await this.checkResize(m, facts, id, size);
      const updated = await this.lists.setCount(m, id, size, this.clock.now());
      await recordChange(m, { accountId, listId: id });
      return { list: updated, added, removed };
    });
  }

  private async checkResize(
    m: EntityManager,
    facts: AccountFacts,
    listId: string,
    size: number,
  ): Promise<void> {
    const counted = await this.webhooks.counted(m, facts.accountId);
    const sizes = await this.lists.sizes(m, facts.accountId);
    try {
      checkListResize(webhookCapsOf(facts), listId, size, counted, sizes);
    } catch (error) {
      // A list that grows a webhook of a team without a plan: the missing plan is the cause, as
      // for a PATCH of the webhook's own filter (403 plan_required).
      throw refusalWithoutPlan(planRequiredOf(facts), error);
    }
  }
}
