import type { EventBody, FilterNode, Phase, TriggerType } from '@meridian/webhooks';
import type { DataSource, EntityManager } from 'typeorm';
import { SUMMARY_COLUMNS, summaryOf } from '../deliveries/event-summary';
import type { IndexedWebhook } from './match-index';

interface WebhookRow {
  id: string;
  account_id: string;
  status: string;
  network: string;
  trigger_type: TriggerType;
  filter_tree: FilterNode;
  confirm_depth: number;
  phases: Phase[];
  target_url: string;
}

export interface ChangeRow {
  seq: number;
  accountId: string;
  webhookId: string | null;
  listId: string | null;
  /** Committed before every transaction still running began (no lower seq can appear). */
  settled: boolean;
  ageMs: number;
}

export interface StoredEvent {
  webhookId: string;
  eventId: string;
  accountId: string;
  phases: Phase[];
  dropped: boolean;
  state: 'pending' | 'confirmed' | 'removed' | 'done';
  payload: EventBody;
}

export interface NewEvent {
  webhookId: string;
  eventId: string;
  accountId: string;
  network: string;
  blockNumber: number;
  blockHash: string;
  phases: readonly Phase[];
  confirmDepth: number;
  dropped: boolean;
  payload: EventBody;
}

const toWebhook = (r: WebhookRow): IndexedWebhook => ({
  id: r.id,
  accountId: r.account_id,
  network: r.network,
  triggerType: r.trigger_type,
  tree: r.filter_tree,
  confirmDepth: r.confirm_depth,
  phases: r.phases,
  targetUrl: r.target_url,
});

const eventOf = (r: Record<string, unknown>): StoredEvent => ({
  webhookId: r['webhook_id'] as string,
  eventId: r['event_id'] as string,
  accountId: r['account_id'] as string,
  phases: r['phases'] as Phase[],
  dropped: r['dropped'] as boolean,
  state: r['state'] as StoredEvent['state'],
  payload: r['payload'] as EventBody,
});

/** The matcher's SQL: it reads H4's webhook and list tables and owns the matching_* tables. */
export class MatchingRepository {
  constructor(
    private readonly ds: DataSource,
    /** Most `rate_limited` log rows a webhook gets per block (DROP_LOG_ROWS_PER_BLOCK). */
    private readonly dropLogRowsPerBlock = DEFAULT_DROP_LOG_ROWS_PER_BLOCK,
  ) {}

  /** Active webhooks, in pages (a partition filter is applied by the caller). */
  async activeWebhooks(): Promise<IndexedWebhook[]> {
    const rows: WebhookRow[] = await this.ds.query(
      `SELECT id, account_id, status, network, trigger_type, filter_tree, confirm_depth, phases,
              target_url
         FROM webhooks.webhooks WHERE status = 'active'`,
    );
    return rows.map(toWebhook);
  }

  /** The webhook if it is active now, else null (paused, deleted, gone). */
  async activeWebhook(id: string): Promise<IndexedWebhook | null> {
    const rows: WebhookRow[] = await this.ds.query(
      `SELECT id, account_id, status, network, trigger_type, filter_tree, confirm_depth, phases,
              target_url
         FROM webhooks.webhooks WHERE id = $1 AND status = 'active'`,
      [id],
    );
    return rows[0] ? toWebhook(rows[0]) : null;
  }

  /** Members of these lists in all (their stored `entry_count`s summed). */
  async listEntryCount(listIds: readonly string[]): Promise<number> {
    if (listIds.length === 0) return 0;
    const rows: { n: string | null }[] = await this.ds.query(
      `SELECT sum(entry_count) AS n FROM webhooks.address_lists WHERE id = ANY($1::text[])`,
      [listIds],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** Every member of a list, streamed in key order pages (a list holds up to 100,000). */
  async listEntries(listId: string, pageSize = 50_000): Promise<string[]> {
    const out: string[] = [];
    let after = '';
    for (;;) {
      const rows: { address: string }[] = await this.ds.query(
        `SELECT address FROM webhooks.address_list_entries
          WHERE list_id = $1 AND address > $2 ORDER BY address LIMIT $3`,
        [listId, after, pageSize],
      );
      for (const r of rows) out.push(r.address);
      if (rows.length < pageSize) return out;
      after = rows[rows.length - 1]!.address;
    }
  }

  /** The change feed above `afterSeq` (WEBHOOKS.md), with whether each row is settled. */
  async changesAfter(afterSeq: number, limit = 10_000): Promise<ChangeRow[]> {
    const rows: Array<Record<string, unknown>> = await this.ds.query(
      `SELECT seq, account_id, webhook_id, list_id,
              xid < pg_snapshot_xmin(pg_current_snapshot()) AS settled,
              (extract(epoch FROM now() - at) * 1000)::bigint AS age_ms
         FROM webhooks.change_log WHERE seq > $1 ORDER BY seq LIMIT $2`,
      [afterSeq, limit],
    );
    return rows.map((r) => ({
      seq: Number(r['seq']),
      accountId: r['account_id'] as string,
      webhookId: (r['webhook_id'] as string | null) ?? null,
      listId: (r['list_id'] as string | null) ?? null,
      settled: r['settled'] as boolean,
      ageMs: Number(r['age_ms']),
    }));
  }

  /**
   * Where the feed starts when the index is loaded: below every change of the last minute, so
   * a transaction that took its seq before the load but committed after it is applied too
   * (re-applying a change is a reload: harmless).
   */
  async changeFeedStart(): Promise<number> {
    const rows: { seq: string | null }[] = await this.ds.query(
      `SELECT coalesce(
         (SELECT min(seq) - 1 FROM webhooks.change_log WHERE at > now() - interval '60 seconds'),
         (SELECT max(seq) FROM webhooks.change_log), 0) AS seq`,
    );
    return Number(rows[0]?.seq ?? 0);
  }

  /** Events per second and burst of an account (caps written by the management side). */
  async eventCaps(accountId: string): Promise<{ rate: number; burst: number } | null> {
    const rows: Array<{ rate: string | null; burst: string | null }> = await this.ds.query(
      `SELECT caps->>'eventsPerSecond' AS rate, caps->>'eventsBurst' AS burst
         FROM webhooks.accounts WHERE account_id = $1`,
      [accountId],
    );
    const row = rows[0];
    if (!row || row.rate === null) return null;
    const rate = Number(row.rate);
    return { rate, burst: row.burst === null ? rate * 12 : Number(row.burst) };
  }

  /** Events already recorded for a block (a redelivered block reuses their decisions). */
  async eventsOfBlocks(network: string, blockHashes: readonly string[]): Promise<StoredEvent[]> {
    const rows: Array<Record<string, unknown>> = await this.ds.query(
      `SELECT webhook_id, event_id, account_id, phases, dropped, state, payload
         FROM webhooks.matching_events WHERE network = $1 AND block_hash = ANY($2)`,
      [network, blockHashes],
    );
    return rows.map(eventOf);
  }

  /**
   * Records new events and counts the dropped ones, in one transaction: a block redelivered
   * after a crash finds them and counts nothing twice. A dropped event also leaves its rows in
   * the delivery log (`rate_limited`, one per phase it would have had, at `droppedAt`), in the
   * same transaction and one statement for the whole block (ADR 0433), at most
   * `dropLogRowsPerBlock` rows per webhook: the rest are only counted (`recordDrops`).
   */
  async recordEvents(events: readonly NewEvent[], droppedAt: Date): Promise<void> {
    if (events.length === 0) return;
    await this.ds.transaction(async (m) => {
      const inserted: Array<{
        webhook_id: string;
        event_id: string;
        account_id: string;
        dropped: boolean;
      }> = await m.query(
        `INSERT INTO webhooks.matching_events
             (webhook_id, event_id, account_id, network, block_number, block_hash, phases,
              confirm_depth, dropped, state, payload)
           SELECT e.webhook_id, e.event_id, e.account_id, e.network, e.block_number, e.block_hash,
                  e.phases, e.confirm_depth, e.dropped, e.state, e.payload
             FROM jsonb_to_recordset($1::jsonb) AS e(webhook_id text, event_id text,
                  account_id text, network text, block_number bigint, block_hash text,
                  phases text[], confirm_depth integer, dropped boolean, state text, payload jsonb)
           ON CONFLICT (webhook_id, event_id) DO NOTHING
           RETURNING webhook_id, event_id, account_id, dropped`,
        [
          JSON.stringify(
            events.map((e) => ({
              webhook_id: e.webhookId,
              event_id: e.eventId,
              account_id: e.accountId,
              network: e.network,
              block_number: e.blockNumber,
              block_hash: e.blockHash.toLowerCase(),
              phases: e.phases,
              confirm_depth: e.confirmDepth,
              dropped: e.dropped,
              state: !e.dropped && e.phases.includes('confirmed') ? 'pending' : 'done',
              payload: e.payload,
            })),
          ),
        ],
      );
      const dropped = new Map<string, { accountId: string; n: number }>();
      for (const row of inserted) {
        if (!row.dropped) continue;
        const d = dropped.get(row.webhook_id) ?? { accountId: row.account_id, n: 0 };
        d.n += 1;
        dropped.set(row.webhook_id, d);
      }
      if (dropped.size === 0) return;
      await recordDrops(m, events, inserted, droppedAt, this.dropLogRowsPerBlock);
      await m.query(
        `INSERT INTO webhooks.matching_rate_limited (webhook_id, account_id, rate_limited_total)
         SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
         ON CONFLICT (webhook_id) DO UPDATE
           SET rate_limited_total = matching_rate_limited.rate_limited_total + EXCLUDED.rate_limited_total,
               updated_at = now()`,
        [
          [...dropped.keys()],
          [...dropped.values()].map((d) => d.accountId),
          [...dropped.values()].map((d) => d.n),
        ],
      );
    });
  }

  /** Pending confirmations of `network` the head at `head` has reached. */
  async dueConfirmations(network: string, head: number, limit = 5_000): Promise<StoredEvent[]> {
    const rows: Array<Record<string, unknown>> = await this.ds.query(
      `SELECT webhook_id, event_id, account_id, phases, dropped, state, payload
         FROM webhooks.matching_events
        WHERE network = $1 AND state = 'pending' AND block_number + confirm_depth - 1 <= $2
        ORDER BY block_number LIMIT $3`,
      [network, head, limit],
    );
    return rows.map(eventOf);
  }

  async setState(
    keys: ReadonlyArray<{ webhookId: string; eventId: string }>,
    state: StoredEvent['state'],
    onlyFrom?: StoredEvent['state'],
  ): Promise<void> {
    if (keys.length === 0) return;
    await this.ds.query(
      `UPDATE webhooks.matching_events e SET state = $3
         FROM unnest($1::text[], $2::text[]) AS k(webhook_id, event_id)
        WHERE e.webhook_id = k.webhook_id AND e.event_id = k.event_id
          AND ($4::text IS NULL OR e.state = $4)`,
      [keys.map((k) => k.webhookId), keys.map((k) => k.eventId), state, onlyFrom ?? null],
    );
  }

  /** Forgets settled events of blocks far below the head (no reorg or confirmation needs them). */
  async prune(network: string, belowBlock: number): Promise<void> {
    await this.ds.query(
      `DELETE FROM webhooks.matching_events
        WHERE network = $1 AND block_number < $2 AND state <> 'pending'`,
      [network, belowBlock],
    );
  }

  async rateLimitedTotal(webhookId: string): Promise<number> {
    const rows: { n: string }[] = await this.ds.query(
      `SELECT rate_limited_total AS n FROM webhooks.matching_rate_limited WHERE webhook_id = $1`,
      [webhookId],
    );
    return Number(rows[0]?.n ?? 0);
  }
}

/** The phases a dropped event would have been delivered in (a removal corrects, never drops). */
const DROPPED_PHASES = ['unconfirmed', 'confirmed'] as const;

/** DROP_LOG_ROWS_PER_BLOCK's default (ADR 0433 amendment "A cap per webhook and block"). */
export const DEFAULT_DROP_LOG_ROWS_PER_BLOCK = 100;

const DROP_ERROR = "dropped: over the account's events per second and burst (not sent, not billed)";

/** The error text of a webhook's last drop row of a block whose later drops were not logged. */
export function cutShortError(unlogged: number): string {
  const events = unlogged === 1 ? 'event' : 'events';
  return `${DROP_ERROR}; ${unlogged} more ${events} of this block dropped and not logged (counted in rate_limited_total)`;
}

/**
 * The delivery-log rows of the events just recorded as dropped over the events budget: outcome
 * `rate_limited`, not billed, final (no attempt follows), one per phase the webhook takes with
 * that phase's body, so a replay sends what the webhook would have received (ADR 0433). Id
 * `<webhook>:<event>:<phase>:rate_limited`: a block redelivered records nothing twice.
 *
 * At most `maxRows` rows per webhook (a Free webhook on a busy token contract drops thousands
 * of events a block): whole events, in the block's order, while their rows fit; the webhook's
 * last row then names how many more of its events this call dropped without a row
 * (`cutShortError`). Every drop is still counted in `matching_rate_limited`. The cap holds per
 * call, i.e. per block, or per part of a block sliced into parts.
 */
async function recordDrops(
  m: EntityManager,
  events: readonly NewEvent[],
  inserted: ReadonlyArray<{ webhook_id: string; event_id: string; dropped: boolean }>,
  droppedAt: Date,
  maxRows: number,
): Promise<void> {
  const fresh = new Set(
    inserted.filter((r) => r.dropped).map((r) => `${r.webhook_id} ${r.event_id}`),
  );
  interface DropRow {
    id: string;
    webhook_id: string;
    account_id: string;
    event_id: string;
    phase: string;
    payload: EventBody;
    error: string;
  }
  const perWebhook = new Map<string, { rows: DropRow[]; unlogged: number; full: boolean }>();
  for (const e of events) {
    if (!e.dropped || !fresh.has(`${e.webhookId} ${e.eventId}`)) continue;
    const phases = DROPPED_PHASES.filter((phase) => e.phases.includes(phase));
    if (phases.length === 0) continue;
    const w = perWebhook.get(e.webhookId) ?? { rows: [], unlogged: 0, full: false };
    perWebhook.set(e.webhookId, w);
    if (w.full || w.rows.length + phases.length > maxRows) {
      w.full = true;
      w.unlogged += 1;
      continue;
    }
    for (const phase of phases)
      w.rows.push({
        id: `${e.webhookId}:${e.eventId}:${phase}:rate_limited`,
        webhook_id: e.webhookId,
        account_id: e.accountId,
        event_id: e.eventId,
        phase,
        payload: { ...e.payload, confirmed: phase === 'confirmed' },
        error: DROP_ERROR,
      });
  }
  const rows: DropRow[] = [];
  for (const w of perWebhook.values()) {
    const last = w.rows.at(-1);
    if (last && w.unlogged > 0) last.error = cutShortError(w.unlogged);
    rows.push(...w.rows);
  }
  if (rows.length === 0) return;
  await m.query(
    `INSERT INTO webhooks.delivery_attempts
       (id, webhook_id, account_id, event_id, phase, attempt, outcome, billed, final, test,
        error_class, error, payload, at, ${SUMMARY_COLUMNS})
     SELECT r.id, r.webhook_id, r.account_id, r.event_id, r.phase, 1, 'rate_limited', false,
            true, false, 'rate_limited', r.error, r.payload, $2, ${summaryOf('r.payload')}
       FROM jsonb_to_recordset($1::jsonb) AS r(id text, webhook_id text, account_id text,
            event_id text, phase text, payload jsonb, error text)
     ON CONFLICT (id) DO NOTHING`,
    [JSON.stringify(rows), droppedAt],
  );
}
