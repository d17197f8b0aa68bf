import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { LOGGER, loggableError } from '@meridian/platform-observability';
import type { Logger } from 'pino';
import { DomainError } from '@meridian/errors';
import { AuthService } from '../auth/auth.service';
import { chainReadFailure, invalidField } from '../common/audit-errors';
import { evmDisplay } from '../common/address';
import { parseAuditRequest, type AuditRequest, type AuditTarget } from '../common/audit-request';
import { keccak256, type Address, type Hex, type PublicClient } from 'viem';
import type { Clock } from '@meridian/time';
import { CLOCK } from '../common/clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { CHAIN_CLIENTS, type ChainClients } from '../evidence/chain-clients';
import { LabelsRepository } from '../labels/labels.repository';
import { CheckRunner } from '../records/check-runner.service';
import { HoneypotTokensRepository } from '../records/honeypot-tokens.repository';
import { VerdictCacheRepository } from '../records/verdict-cache.repository';
import { formatProbability } from '../scoring/wallet-score';
import { WalletAssessor } from '../wallet/wallet-assessor.service';
import { SUCCESS } from '../wallet/wallet-responses';
import {
  centralisationLabel,
  centralisationScore,
  riskIndicators,
  riskScore,
  rugForensicDetails,
  tokenVerdict,
  type RiskIndicators,
  type RiskStatus,
  type RugForensicDetails,
} from './risk-score';
import { ForkSimulator } from './fork/fork-simulator';
import { codeVersion } from './proxy';
import { analyzeToken, answersAsToken, tokenState, type AnalyzeOptions } from './token-analyzer';

/** The cached verdict of one token (plain JSON). */
export interface RugPullVerdict {
  /** keccak256 of the runtime code the verdict was computed on (the cache key with the address). */
  readonly codeHash: string;
  readonly creator: string | null;
  readonly createdAt: string | null;
  readonly status: 'Fraud' | 'Not Fraud';
  readonly probability: number;
  readonly riskScore: number;
  readonly riskStatus: RiskStatus;
  readonly centralisationScore: number;
  /** Verdicts cached before honeypot_with_same_creator existed lack it (answered 0). */
  readonly indicators: RiskIndicators & { honeypot_with_same_creator?: 0 | 1 };
  readonly forensic: RugForensicDetails;
}

/** A verdict that links its creator to the token (honeypot_related_address, ADR 0302 amendment). */
export const isHoneypotVerdict = (verdict: RugPullVerdict): boolean =>
  verdict.status === 'Fraud' && verdict.indicators.is_honeypot === 1;

const FLAG_CATEGORIES = new Set([
  'malicious_contract',
  'spam_token',
  'phishing',
  'stealing',
  'sanctioned',
]);

@Injectable()
export class RugPullService implements OnModuleDestroy {
  private readonly forks = new Map<string, ForkSimulator>();

  constructor(
    private readonly auth: AuthService,
    private readonly runner: CheckRunner,
    private readonly labels: LabelsRepository,
    private readonly wallets: WalletAssessor,
    private readonly verdicts: VerdictCacheRepository,
    private readonly honeypots: HoneypotTokensRepository,
    @Inject(CHAIN_CLIENTS) private readonly chains: ChainClients,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async onModuleDestroy(): Promise<void> {
    await Promise.all([...this.forks.values()].map((fork) => fork.close()));
  }

  /** One fork node per chain, when fork simulation is on and the chain has a node URL. */
  private forkFor(target: AuditTarget): AnalyzeOptions['confirmTrade'] {
    if (!this.config.AUDIT_FORK_SIMULATION) return undefined;
    const url = this.chains.urlFor(target.chain);
    if (!url) return undefined;
    let fork = this.forks.get(url);
    if (!fork) {
      fork = new ForkSimulator(url);
      this.forks.set(url, fork);
    }
    const simulator = fork;
    return (token, router, value, blockNumber) =>
      simulator.trade(token, router, value, blockNumber);
  }

  async check(authorization: string | undefined, request: AuditRequest) {
    const principal = await this.auth.authenticate(authorization);
    const target = parseAuditRequest(request, 'contract_address');
    if (target.chain.addressFormat !== 'evm' || !this.chains.clientFor(target.chain)) {
      throw invalidField(
        'unsupported_network',
        `the rug pull checker needs an EVM node; none is configured for ${target.chain.code}`,
        'network',
      );
    }
    const client = this.chains.clientFor(target.chain)!;
    let code: Hex | undefined;
    let version = '';
    const { verdict, record, cached, computedAt, stale } = await this.runner.run<RugPullVerdict>(
      'rug-pull',
      principal,
      target,
      async () => {
        const computed = await this.evaluate(target, code);
        // Every computed verdict, whatever the cache keeps (AUDIT_VERDICT_TTL_MS=0 keeps none),
        // says whether the token is a honeypot of its creator (ADR 0302 amendment).
        await this.honeypots.record(
          target.chain.code,
          target.address.key,
          { honeypot: isHoneypotVerdict(computed), creator: computed.creator },
          version,
          this.clock.now(),
        );
        return computed;
      },
      {
        // The verdict belongs to the code at the address, not to the address: a contract
        // redeployed there (CREATE2, a devnet restart) must not get the old one's verdict.
        // Behind a proxy the implementation's code counts too: an upgrade is new code. And to
        // the state it read (owner, pool, today's one-call trade): a switch armed or a fee
        // raised after a check is seen at the next one (ADR 0303, third amendment). And to the
        // load of the label packs: a reload labelling the token or its creator (ADR 0306).
        version: async () => {
          const labels = await this.labels.datasetVersion();
          code = await this.readCode(client, target);
          try {
            const token = target.address.key as Address;
            const [ofCode, ofState] = await Promise.all([
              codeVersion(client, token, code ?? '0x'),
              code && code !== '0x' ? tokenState(client, token, this.routersFor(target)) : '',
            ]);
            version = `${ofCode}|${ofState}|labels=${labels}`;
            return version;
          } catch (error) {
            throw chainReadFailure(error);
          }
        },
        // The creator's link is part of the verdict (honeypot_with_same_creator, and Fraud
        // through it) but not of its version: a honeypot of the same creator found, or cleared,
        // after this verdict was cached makes it stale at once, so the creator's tokens agree.
        holds: async (cached) =>
          !cached.creator ||
          (cached.indicators.honeypot_with_same_creator ?? 0) ===
            ((await this.wallets.honeypotRelated(
              target.chain,
              cached.creator.toLowerCase(),
              target.address.key,
            ))
              ? 1
              : 0),
      },
    );
    // The creator's wallet verdict may name this token as its honeypot (or did, and must stop):
    // a cached one is dropped, so the creator's next wallet check reads the new verdict at once
    // instead of after the reuse TTL.
    if (!cached && verdict.creator)
      await this.verdicts.forget(target.chain.code, verdict.creator.toLowerCase(), [
        'wallet-check',
        'wallet-audit',
      ]);
    // So may the token's own wallet verdict (a honeypot is honeypot_related_address there too).
    if (!cached)
      await this.verdicts.forget(target.chain.code, target.address.key, [
        'wallet-check',
        'wallet-audit',
      ]);
    return {
      data: {
        message: SUCCESS,
        contractAddress: target.address.display,
        chain: target.chain.code,
        // EIP-55 like contractAddress (verdicts cached before this stored it lower case).
        contractCreatorAddress: verdict.creator ? evmDisplay(verdict.creator) : null,
        contractCreationTime: verdict.createdAt,
        status: verdict.status,
        probabilityFraud: formatProbability(verdict.probability),
        risk_score: verdict.riskScore,
        risk_status: verdict.riskStatus,
        risk_indicators: {
          ...verdict.indicators,
          honeypot_with_same_creator: verdict.indicators.honeypot_with_same_creator ?? 0,
        },
        centralization_risk: {
          score: verdict.centralisationScore,
          status: centralisationLabel(verdict.centralisationScore),
        },
        forensic_details: verdict.forensic,
        checked_times: record.checkedTimes,
        lastChecked: computedAt.toISOString(),
        stale,
        createdAt: record.createdAt.toISOString(),
        updatedAt: record.updatedAt.toISOString(),
      },
    };
  }

  private routersFor(target: AuditTarget): Address[] {
    return (this.config.AUDIT_DEX_ROUTERS[target.chain.code] ?? []) as Address[];
  }

  private async readCode(client: PublicClient, target: AuditTarget): Promise<Hex | undefined> {
    try {
      return await client.getCode({ address: target.address.key as Address });
    } catch (error) {
      throw chainReadFailure(error);
    }
  }

  private async evaluate(target: AuditTarget, code: Hex | undefined): Promise<RugPullVerdict> {
    const client = this.chains.clientFor(target.chain)!;
    const routers = this.routersFor(target);
    let analysis;
    try {
      // A contract that is no token (a router, a factory) gets no verdict: 400 not_a_token.
      if (code && code !== '0x' && !(await answersAsToken(client, target.address.key as Address)))
        throw new DomainError(
          'not_a_token',
          'invalid',
          'contract_address holds a contract that is not a token: it does not answer ' +
            'totalSupply() and balanceOf(address) as an ERC-20 does',
          { details: { field: 'contract_address' } },
        );
      analysis = await analyzeToken(client, target.address.key as Address, routers, {
        code: code ?? '0x',
        confirmTrade: this.forkFor(target),
        onConfirmFailed: (error) =>
          this.logger.warn(
            // Cleaned: a viem error's message and stack quote the node URL and its token.
            { error: loggableError(error), token: target.address.key },
            'fork trade confirmation failed; the one-call trade result stands',
          ),
      });
    } catch (error) {
      // A revert of our own simulation is handled inside the analyzer (an inconclusive probe).
      // Only transport trouble and timeouts are the node's (502); anything else is ours (500).
      throw chainReadFailure(error);
    }
    if (!analysis)
      throw new DomainError(
        'not_a_contract',
        'invalid',
        'contract_address holds no contract code on this network',
        { details: { field: 'contract_address' } },
      );
    const indicators = riskIndicators(analysis.findings);
    const forensic = rugForensicDetails(analysis.findings, indicators);
    const score = riskScore(analysis.findings, indicators, forensic);
    const centralisation = centralisationScore(analysis.findings, indicators, forensic);
    // The token's own labels make it Fraud; a name or symbol copied from a canonical token (the
    // wallet check's fake_token) does not: the verdict is the code's behaviour, and the spec's
    // rug pull fields could not say why (ADR 0302, third amendment).
    const ownLabels = await this.labels.forAddresses(target.chain.code, true, [target.address.key]);
    const labelled = ownLabels.some((l) => FLAG_CATEGORIES.has(l.category));
    // The creator's wallet verdict feeds the token's: a flagged creator makes the token Fraud.
    const creator = analysis.creator
      ? await this.wallets.assess(target.chain, analysis.creator.address.toLowerCase(), {
          exceptToken: target.address.key,
        })
      : null;
    const creatorFlagged = creator?.status === 'Fraud' && creator.probability === 1;
    const probability =
      labelled || creatorFlagged ? 1 : 1 - (1 - score / 100) * (1 - (creator?.probability ?? 0));
    const { status, riskScore: shownScore, riskStatus } = tokenVerdict(score, probability);
    return {
      codeHash: keccak256(code ?? '0x'),
      creator: analysis.creator?.address ?? null,
      createdAt: analysis.creator?.createdAt.toISOString() ?? null,
      status,
      probability,
      riskScore: shownScore,
      riskStatus,
      centralisationScore: centralisation,
      // Why a token that scores low can still be Fraud: its creator made another honeypot.
      indicators: {
        ...indicators,
        honeypot_with_same_creator: (creator?.counts.honeypot_related_address ?? 0) > 0 ? 1 : 0,
      },
      forensic,
    };
  }
}
