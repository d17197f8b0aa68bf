import type { EntityManager } from 'typeorm';
import {
  testDeliveryKeepMs,
  type TestDeliveryLimits,
  type TestDeliveryScope,
} from './test-delivery-limits';

/**
 * The test deliveries sent (`webhooks.test_deliveries`), counted in Postgres so the limits hold
 * across every matcher replica: an API request may reach any of them (ADR 0431 amendment).
 */
export class TestDeliveriesRepository {
  /** `limits`: the configured ones (`testDeliveryLimits(config)`). */
  constructor(private readonly limits: TestDeliveryLimits) {}

  /**
   * Takes the account's test-delivery lock for the transaction of `m` (tests of one account are
   * counted and recorded one after the other, on whichever replica) and forgets its sends older
   * than every window.
   */
  async lockAccount(m: EntityManager, accountId: string, now: Date): Promise<void> {
    await m.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
      `test-deliveries:${accountId}`,
    ]);
    await m.query(`DELETE FROM webhooks.test_deliveries WHERE account_id = $1 AND sent_at <= $2`, [
      accountId,
      new Date(now.getTime() - testDeliveryKeepMs(this.limits)),
    ]);
  }

  /** Each scope's sends in its window, newest first, at most its limit (all a refusal reads). */
  async recent(
    m: EntityManager,
    webhookId: string,
    accountId: string,
    now: Date,
  ): Promise<Record<TestDeliveryScope, Date[]>> {
    const read = async (
      column: 'webhook_id' | 'account_id',
      id: string,
      scope: TestDeliveryScope,
    ) => {
      const { limit, windowMs } = this.limits[scope];
      const rows = (await m.query(
        `SELECT sent_at FROM webhooks.test_deliveries
          WHERE ${column} = $1 AND sent_at > $2 ORDER BY sent_at DESC LIMIT $3`,
        [id, new Date(now.getTime() - windowMs), limit],
      )) as { sent_at: Date }[];
      return rows.map((row) => row.sent_at);
    };
    return {
      webhook: await read('webhook_id', webhookId, 'webhook'),
      account: await read('account_id', accountId, 'account'),
    };
  }

  async record(
    m: EntityManager,
    sent: { eventId: string; webhookId: string; accountId: string; at: Date },
  ): Promise<void> {
    await m.query(
      `INSERT INTO webhooks.test_deliveries (event_id, webhook_id, account_id, sent_at)
       VALUES ($1, $2, $3, $4)`,
      [sent.eventId, sent.webhookId, sent.accountId, sent.at],
    );
  }
}
