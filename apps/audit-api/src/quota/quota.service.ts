import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import { dailyWindow, PLAN_IDS, PLANS, type PlanId } from '@meridian/plans';
import { TokenBuckets } from '@meridian/rate-limits';
import type { Clock } from '@meridian/time';
import { DataSource } from 'typeorm';
import type { ApiKeyPrincipal } from '../auth/credential-source';
import { CLOCK } from '../common/clock.token';

export interface QuotaReservation {
  readonly accountId: string;
  readonly windowStart: Date;
}

/**
 * Per-plan audit limits (@meridian/plans): a requests-per-second token bucket in memory (429 with
 * Retry-After) and a daily check quota in Postgres (402), reset at 07:30 UTC like the Free CU day.
 */
@Injectable()
export class QuotaService {
  private readonly buckets: TokenBuckets;
  private nextSweepMs = 0;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.buckets = new TokenBuckets(() => this.clock.now().getTime());
  }

  limitsOf(principal: ApiKeyPrincipal): { checksPerDay: number; requestsPerSecond: number } {
    if (principal.auditQuota) return principal.auditQuota;
    const plan = principal.planId as PlanId | null;
    if (!plan || !PLAN_IDS.includes(plan))
      throw new DomainError(
        'plan_required',
        'forbidden',
        'the account has no plan with address audit access',
      );
    return PLANS[plan].audit;
  }

  /** Rate limit first (cheap, in memory), then reserve one check of the day atomically. */
  async reserve(principal: ApiKeyPrincipal): Promise<QuotaReservation> {
    const limits = this.limitsOf(principal);
    const now = this.clock.now();
    if (now.getTime() >= this.nextSweepMs) {
      // Buckets full again are dropped, so memory follows the accounts active in the last minute.
      this.buckets.sweep();
      this.nextSweepMs = now.getTime() + 60_000;
    }
    const taken = this.buckets.take(principal.accountId, 1, {
      ratePerSecond: limits.requestsPerSecond,
      burst: Math.max(1, limits.requestsPerSecond),
    });
    if (!taken.ok)
      throw new DomainError('rate_limited', 'rate_limited', 'too many audit requests; slow down', {
        details: { retryAfterMs: taken.retryAfterMs },
      });
    const window = dailyWindow(now);
    const rows = (await this.dataSource.query(
      `INSERT INTO audit.quota_usage (account_id, window_start, used) VALUES ($1, $2, 1)
       ON CONFLICT (account_id, window_start) DO UPDATE SET used = audit.quota_usage.used + 1
         WHERE audit.quota_usage.used < $3
       RETURNING used`,
      [principal.accountId, window.start, limits.checksPerDay],
    )) as Array<{ used: number }>;
    if (rows.length === 0 || rows[0]!.used > limits.checksPerDay) {
      throw new DomainError(
        'quota_exhausted',
        'payment_required',
        `the daily audit quota of ${limits.checksPerDay} checks is used up`,
        {
          details: { limit: limits.checksPerDay, resets_at: window.end.toISOString() },
        },
      );
    }
    return { accountId: principal.accountId, windowStart: window.start };
  }

  /** Today's use of the daily check quota (the dashboard shows it); reading it costs no check. */
  async today(
    principal: ApiKeyPrincipal,
  ): Promise<{ limit: number; used: number; resets_at: string }> {
    const limits = this.limitsOf(principal);
    const window = dailyWindow(this.clock.now());
    const rows = (await this.dataSource.query(
      'SELECT used FROM audit.quota_usage WHERE account_id = $1 AND window_start = $2',
      [principal.accountId, window.start],
    )) as Array<{ used: number }>;
    return {
      limit: limits.checksPerDay,
      used: Number(rows[0]?.used ?? 0),
      resets_at: window.end.toISOString(),
    };
  }

  /** Gives a check back when it failed on our side (upstream trouble): the client got no verdict. */
  async release(reservation: QuotaReservation): Promise<void> {
    await this.dataSource.query(
      'UPDATE audit.quota_usage SET used = used - 1 WHERE account_id = $1 AND window_start = $2 AND used > 0',
      [reservation.accountId, reservation.windowStart],
    );
  }
}
