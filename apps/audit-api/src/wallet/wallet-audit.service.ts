import { Inject, Injectable } from '@nestjs/common';
import type { Clock } from '@meridian/time';
import { AuthService } from '../auth/auth.service';
import { CLOCK } from '../common/clock.token';
import { parseAuditRequest, type AuditRequest } from '../common/audit-request';
import { AddressRecordsRepository } from '../records/address-records.repository';
import { CheckRunner } from '../records/check-runner.service';
import { WalletAssessor, type WalletAssessment } from './wallet-assessor.service';
import { walletAuditData, walletCheckData } from './wallet-responses';

@Injectable()
export class WalletAuditService {
  constructor(
    private readonly auth: AuthService,
    private readonly runner: CheckRunner,
    private readonly assessor: WalletAssessor,
    private readonly records: AddressRecordsRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Wallet risk (quick): the spec's audit result. */
  async check(authorization: string | undefined, request: AuditRequest) {
    const { display, chain, assessment, record, sanctions } = await this.evaluate(
      'wallet-check',
      authorization,
      request,
    );
    return { data: walletCheckData(display, chain, assessment, record, sanctions) };
  }

  /** Wallet audit (full profile): the check plus behavioural fields. */
  async audit(authorization: string | undefined, request: AuditRequest) {
    const { display, chain, assessment, record, sanctions } = await this.evaluate(
      'wallet-audit',
      authorization,
      request,
    );
    return { data: walletAuditData(display, chain, assessment, record, sanctions) };
  }

  private async evaluate(
    product: 'wallet-check' | 'wallet-audit',
    authorization: string | undefined,
    request: AuditRequest,
  ) {
    const principal = await this.auth.authenticate(authorization);
    const target = parseAuditRequest(request, 'address');
    const { verdict, record, computedAt, stale } = await this.runner.run<WalletAssessment>(
      product,
      principal,
      target,
      () => this.assessor.assess(target.chain, target.address.key),
      // A verdict is reused only while the address's own state is what it read: a transaction it
      // sent (its nonce) or a native balance change makes the next check compute afresh (QA L1),
      // and so do a reload of the label packs and a token transfer from or to it since.
      {
        version: () => this.assessor.stateVersion(target.chain, target.address.key),
        holds: (cached) => this.assessor.stillHolds(target.chain, target.address.key, cached),
      },
    );
    const sanctions = await this.records.syncSanctions(
      record.id,
      verdict.sanctions,
      this.clock.now(),
    );
    return {
      display: target.address.display,
      chain: target.chain.code,
      assessment: verdict,
      record: { ...record, computedAt, stale },
      sanctions,
    };
  }
}
