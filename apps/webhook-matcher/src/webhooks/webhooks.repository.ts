import { Injectable } from '@nestjs/common';
import type { CountedWebhook } from '@meridian/plans';
import type {
  FilterNode,
  Phase,
  PreviousSecret,
  TriggerType,
  WebhookStatus,
} from '@meridian/webhooks';
import type { EntityManager } from 'typeorm';
import { returning } from '../db/returning';
import type { NetworkKey } from '@meridian/networks';
import type { WebhookChain } from './networks';
import { previousSecretsParams } from './previous-secrets';

export interface WebhookRow {
  id: string;
  seq: string;
  account_id: string;
  name: string | null;
  status: WebhookStatus;
  chain: WebhookChain;
  network: NetworkKey;
  trigger_type: TriggerType;
  filters: FilterNode | null;
  addresses: string[];
  list_refs: string[];
  filter_tree: FilterNode;
  inline_address_count: number;
  confirm_depth: number;
  phases: Phase[];
  target_url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  /** Every previous secret (`previousSecretsOf` reads the three columns together). */
  previous_secrets: Array<{ sealed: string; expires_at: string }> | null;
  version: number;
  published_version: number;
  idempotency_key: string | null;
  /** requestFingerprint of the create that used idempotency_key (null before the migration). */
  idempotency_request_hash: string | null;
  /** The last owner resume (null before the first): the endpoint is said to be fixed then. */
  resumed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * A row as the status publisher reads it: with its Postgres row version (`xmin`, moved by every
 * write), so its mark can tell the row it put from one written since.
 */
export interface PublishedRow extends WebhookRow {
  row_xmin: string;
}

export interface NewWebhook {
  id: string;
  accountId: string;
  name: string | null;
  status: WebhookStatus;
  chain: string;
  network: string;
  triggerType: string;
  filters: FilterNode | null;
  addresses: readonly string[];
  listRefs: readonly string[];
  tree: FilterNode;
  inlineAddresses: number;
  referencedLists: readonly string[];
  confirmDepth: number;
  phases: readonly string[];
  targetUrl: string;
  secretSealed: string;
  idempotencyKey: string | null;
  idempotencyRequestHash: string | null;
  now: Date;
}

/** The columns a PATCH writes (`update`); `patchChangesWebhook` compares them to the row. */
export interface PatchedWebhookFields {
  name: string | null;
  filters: FilterNode | null;
  addresses: readonly string[];
  listRefs: readonly string[];
  tree: FilterNode;
  inlineAddresses: number;
  confirmDepth: number;
  phases: readonly string[];
  targetUrl: string;
}

@Injectable()
export class WebhooksRepository {
  async insert(m: EntityManager, w: NewWebhook): Promise<WebhookRow> {
    const rows: WebhookRow[] = await m.query(
      `INSERT INTO webhooks.webhooks (id, account_id, name, status, chain, network, trigger_type, filters, addresses,
         list_refs, filter_tree, inline_address_count, confirm_depth, phases, target_url, secret_sealed,
         idempotency_key, idempotency_request_hash, created_at, updated_at)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$19) RETURNING *`,
      [
        w.id,
        w.accountId,
        w.name,
        w.status,
        w.chain,
        w.network,
        w.triggerType,
        w.filters === null ? null : JSON.stringify(w.filters),
        w.addresses,
        w.listRefs,
        JSON.stringify(w.tree),
        w.inlineAddresses,
        w.confirmDepth,
        w.phases,
        w.targetUrl,
        w.secretSealed,
        w.idempotencyKey,
        w.idempotencyRequestHash,
        w.now,
      ],
    );
    await this.setListRefs(m, w.id, w.referencedLists);
    return rows[0]!;
  }

  async setListRefs(m: EntityManager, webhookId: string, lists: readonly string[]): Promise<void> {
    await m.query(`DELETE FROM webhooks.webhook_list_refs WHERE webhook_id = $1`, [webhookId]);
    if (lists.length > 0)
      await m.query(
        `INSERT INTO webhooks.webhook_list_refs (webhook_id, list_id) SELECT $1, unnest($2::text[])`,
        [webhookId, lists],
      );
  }

  /** A non-deleted webhook of the account (someone else's answers null like an unknown one). */
  async find(
    m: EntityManager,
    accountId: string,
    id: string,
    forUpdate = false,
  ): Promise<WebhookRow | null> {
    const rows: WebhookRow[] = await m.query(
      `SELECT * FROM webhooks.webhooks WHERE id = $1 AND account_id = $2 AND status <> 'deleted'${forUpdate ? ' FOR UPDATE' : ''}`,
      [id, accountId],
    );
    return rows[0] ?? null;
  }

  async findByIdempotencyKey(
    m: EntityManager,
    accountId: string,
    key: string,
  ): Promise<WebhookRow | null> {
    const rows: WebhookRow[] = await m.query(
      `SELECT * FROM webhooks.webhooks WHERE account_id = $1 AND idempotency_key = $2`,
      [accountId, key],
    );
    return rows[0] ?? null;
  }

  /** Newest first, after the cursor (a seq), non-deleted. */
  async page(
    m: EntityManager,
    accountId: string,
    limit: number,
    before: string | null,
  ): Promise<WebhookRow[]> {
    return m.query(
      `SELECT * FROM webhooks.webhooks WHERE account_id = $1 AND status <> 'deleted'
         AND ($2::bigint IS NULL OR seq < $2::bigint) ORDER BY seq DESC LIMIT $3`,
      [accountId, before, limit],
    );
  }

  /**
   * The account's non-deleted webhooks as the cap rules count them, newest first. A webhook's
   * list references are read from its stored tree, every one (a list in two leaves twice: the
   * spec's rules 2 and 3, no de-duplication; `webhook_list_refs` holds each list once).
   */
  async counted(
    m: EntityManager,
    accountId: string,
  ): Promise<Array<CountedWebhook & { status: WebhookStatus }>> {
    return this.countedWhere(m, `w.account_id = $1 AND w.status <> 'deleted'`, [accountId]);
  }

  /**
   * These webhooks counted as `counted` counts them, whatever their status (a record's `usage`,
   * `RecordUsage`): one reading of a stored webhook for the caps and for its record.
   */
  async countedOf(
    m: EntityManager,
    webhookIds: readonly string[],
  ): Promise<Array<CountedWebhook & { status: WebhookStatus; accountId: string }>> {
    return this.countedWhere(m, `w.id = ANY($1::text[])`, [webhookIds]);
  }

  private async countedWhere(
    m: EntityManager,
    where: string,
    params: unknown[],
  ): Promise<Array<CountedWebhook & { status: WebhookStatus; accountId: string }>> {
    const rows: Array<{
      id: string;
      account_id: string;
      status: WebhookStatus;
      inline_address_count: number;
      refs: string[];
    }> = await m.query(
      `SELECT w.id, w.account_id, w.status, w.inline_address_count,
           coalesce((SELECT array_agg(ref #>> '{}')
                       FROM jsonb_path_query(w.filter_tree, 'strict $.**.list_refs[*]', '{}', true)
                         AS ref), '{}') AS refs
         FROM webhooks.webhooks w
         WHERE ${where} ORDER BY w.seq DESC`,
      params,
    );
    return rows.map((r) => ({
      id: r.id,
      accountId: r.account_id,
      status: r.status,
      inlineAddresses: r.inline_address_count,
      listRefs: r.refs,
    }));
  }

  async update(
    m: EntityManager,
    id: string,
    patch: PatchedWebhookFields & { now: Date },
  ): Promise<WebhookRow> {
    const rows = returning<WebhookRow>(
      await m.query(
        `UPDATE webhooks.webhooks SET name = $2, filters = $3, addresses = $4, list_refs = $5, filter_tree = $6,
         inline_address_count = $7, confirm_depth = $8, phases = $9, target_url = $10, updated_at = $11,
         version = version + 1
       WHERE id = $1 RETURNING *`,
        [
          id,
          patch.name,
          patch.filters === null ? null : JSON.stringify(patch.filters),
          patch.addresses,
          patch.listRefs,
          JSON.stringify(patch.tree),
          patch.inlineAddresses,
          patch.confirmDepth,
          patch.phases,
          patch.targetUrl,
          patch.now,
        ],
      ),
    );
    return rows[0]!;
  }

  async setStatus(
    m: EntityManager,
    id: string,
    status: WebhookStatus,
    now: Date,
    /** An owner resume: stamps resumed_at (the endpoint is said to be fixed). */
    resumed = false,
  ): Promise<WebhookRow> {
    const rows = returning<WebhookRow>(
      await m.query(
        `UPDATE webhooks.webhooks SET status = $2, updated_at = $3, version = version + 1,
         deleted_at = CASE WHEN $2 = 'deleted' THEN $3 ELSE deleted_at END,
         resumed_at = CASE WHEN $4 THEN $3 ELSE resumed_at END
       WHERE id = $1 RETURNING *`,
        [id, status, now, resumed],
      ),
    );
    if (status === 'deleted')
      await m.query(`DELETE FROM webhooks.webhook_list_refs WHERE webhook_id = $1`, [id]);
    return rows[0]!;
  }

  async rotateSecret(
    m: EntityManager,
    id: string,
    secretSealed: string,
    previous: readonly PreviousSecret[],
    now: Date,
  ): Promise<WebhookRow> {
    const [latestSealed, latestExpiresAt, list] = previousSecretsParams(previous);
    const rows = returning<WebhookRow>(
      await m.query(
        `UPDATE webhooks.webhooks SET secret_sealed = $2, previous_secret_sealed = $3, previous_secret_expires_at = $4,
         previous_secrets = $6::jsonb, updated_at = $5, version = version + 1 WHERE id = $1 RETURNING *`,
        [id, secretSealed, latestSealed, latestExpiresAt, now, list],
      ),
    );
    return rows[0]!;
  }

  /** The rows of `ids` as the status publisher puts them (with what `markPublished` checks). */
  async byIds(m: EntityManager, ids: readonly string[]): Promise<PublishedRow[]> {
    return m.query(
      `SELECT *, xmin::text AS row_xmin FROM webhooks.webhooks WHERE id = ANY($1::text[])`,
      [ids],
    );
  }

  async unpublished(m: EntityManager, limit: number): Promise<PublishedRow[]> {
    return m.query(
      `SELECT *, xmin::text AS row_xmin FROM webhooks.webhooks
        WHERE version > published_version LIMIT $1`,
      [limit],
    );
  }

  /**
   * Records that the bucket holds `row` at its version, only if the row is still the one read:
   * a write since (a reseal moves `published_version` back without a new version, ADR 0424) is
   * left for the next tick. Marking by version alone let a tick that read the row before a
   * reseal mark the resealed row published, and its new sealing never reached the bucket.
   */
  async markPublished(m: EntityManager, row: PublishedRow): Promise<void> {
    await m.query(
      `UPDATE webhooks.webhooks SET published_version = $2
        WHERE id = $1 AND published_version < $2 AND xmin::text = $3`,
      [row.id, row.version, row.row_xmin],
    );
  }
}
