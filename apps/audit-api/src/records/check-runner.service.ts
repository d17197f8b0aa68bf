import { Inject, Injectable } from '@nestjs/common';
import { isDomainError } from '@meridian/errors';
import type { Clock } from '@meridian/time';
import type { ApiKeyPrincipal } from '../auth/credential-source';
import { UPSTREAM_UNAVAILABLE } from '../common/audit-errors';
import { CLOCK } from '../common/clock.token';
import type { AuditTarget } from '../common/audit-request';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { QuotaService } from '../quota/quota.service';
import { AddressRecordsRepository, type AddressRecord } from './address-records.repository';
import { VerdictCacheRepository, type AuditProduct } from './verdict-cache.repository';

/**
 * The frame every product shares: reserve a check (429/402), reuse a fresh cached verdict or
 * compute one, count the check on the address record (+1, atomic), answer. A check that fails
 * after its reservation (502, not a contract) gives its quota back.
 */
@Injectable()
export class CheckRunner {
  constructor(
    private readonly quota: QuotaService,
    private readonly records: AddressRecordsRepository,
    private readonly cache: VerdictCacheRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async run<V>(
    product: AuditProduct,
    principal: ApiKeyPrincipal,
    target: AuditTarget,
    compute: () => Promise<V>,
    options: {
      /** What the verdict depends on besides the address (e.g. the hash of the code there). */
      version?: () => Promise<string>;
      /**
       * Whether a cached verdict still holds for what it read outside its version, checked at
       * each reuse (cheap reads only); one that does not is computed again.
       */
      holds?: (cached: V) => Promise<boolean>;
    } = {},
  ): Promise<{
    verdict: V;
    record: AddressRecord;
    cached: boolean;
    computedAt: Date;
    /**
     * Served without its version checked: the node did not answer the reads that say whether
     * the verdict still holds (the answer's `stale`, README "Verdict cache").
     */
    stale: boolean;
  }> {
    const reservation = await this.quota.reserve(principal);
    try {
      const chain = target.chain.code;
      const key = target.address.key;
      const ttl = this.config.AUDIT_VERDICT_TTL_MS;
      const notBefore = new Date(this.clock.now().getTime() - ttl);
      let version = '';
      try {
        if (options.version) version = await options.version();
      } catch (error) {
        // The node did not answer the version's reads: a verdict computed within the TTL is
        // served as it stands (its lastChecked says when), rather than no answer; none: the
        // node's failure, as computing would give.
        const stale =
          ttl > 0 && isDomainError(error) && error.code === UPSTREAM_UNAVAILABLE
            ? await this.cache.get<V>(chain, key, product, undefined, notBefore)
            : undefined;
        if (stale === undefined) throw error;
        const record = await this.records.recordCheck(chain, key, this.clock.now());
        return {
          verdict: stale.verdict,
          record,
          cached: true,
          computedAt: stale.computedAt,
          stale: true,
        };
      }
      let hit =
        ttl > 0 ? await this.cache.get<V>(chain, key, product, version, notBefore) : undefined;
      if (hit !== undefined && options.holds && !(await options.holds(hit.verdict)))
        hit = undefined;
      const cached = hit !== undefined;
      let verdict: V;
      // When the verdict was computed: the answer's lastChecked (a reused verdict says when it
      // read the chain, not when it was served; QA L1).
      let computedAt: Date;
      if (hit !== undefined) ({ verdict, computedAt } = hit);
      else {
        verdict = await compute();
        computedAt = this.clock.now();
        if (ttl > 0) await this.cache.put(chain, key, product, version, verdict, computedAt);
      }
      const record = await this.records.recordCheck(chain, key, this.clock.now());
      return { verdict, record, cached, computedAt, stale: false };
    } catch (error) {
      // The client got no verdict (upstream trouble, not a contract, …): the check is not counted.
      await this.quota.release(reservation).catch(() => undefined);
      throw error;
    }
  }
}
