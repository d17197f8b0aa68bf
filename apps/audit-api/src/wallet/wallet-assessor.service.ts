import { Inject, Injectable } from '@nestjs/common';
import type { AuditChain } from '@meridian/networks';
import type { Clock } from '@meridian/time';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { CLOCK } from '../common/clock.token';
import { chainReadFailure } from '../common/audit-errors';
import { CHAIN_CLIENTS, type ChainClients } from '../evidence/chain-clients';
import {
  gatherWalletEvidence,
  nonceReadFor,
  transfersSince,
  walletStateVersion,
  type WalletEvidence,
} from '../evidence/wallet-evidence';
import { LabelsRepository, type StoredLabel } from '../labels/labels.repository';
import type { SanctionRecordInput } from '../records/address-records.repository';
import { HoneypotTokensRepository } from '../records/honeypot-tokens.repository';
import { forensicFlags, NO_CHAIN_FLAGS } from '../scoring/forensic-flags';
import type { WalletForensicCounts } from '../scoring/forensic-fields';
import { walletVerdict, type WalletFeatures, type WalletStatus } from '../scoring/wallet-score';

/** Everything computed about one address; plain JSON so it can sit in the verdict cache. */
export interface WalletAssessment {
  readonly status: WalletStatus;
  readonly probability: number;
  readonly counts: WalletForensicCounts;
  readonly sources: string[];
  /** Token symbol when the address is a token contract. */
  readonly token: string | null;
  readonly sanctions: SanctionRecordInput[];
  readonly features: WalletFeatures;
  readonly chainRead: boolean;
  readonly balanceWei: string | null;
  /** Names of known contracts the address used (canonical tokens, mixer pools). */
  readonly protocols: string[];
  /**
   * The head block the chain evidence was read up to (decimal), so a reuse can ask for the token
   * transfers since; null without chain evidence. Absent in verdicts cached before it.
   */
  readonly headBlock?: string | null;
}

const EXPOSURE_CATEGORIES = new Set([
  'sanctioned',
  'mixer',
  'phishing',
  'stealing',
  'malicious_contract',
  'malicious_creator',
]);

@Injectable()
export class WalletAssessor {
  constructor(
    private readonly labels: LabelsRepository,
    private readonly honeypots: HoneypotTokensRepository,
    @Inject(CHAIN_CLIENTS) private readonly chains: ChainClients,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * `fake_token` from the chain: a contract whose symbol or name is a canonical token's of this
   * chain at another address. The rug pull checker does not use it (ADR 0302, third amendment).
   */
  async impersonates(
    chain: AuditChain,
    address: string,
    token: { readonly symbol: string | null; readonly name: string | null } | null,
  ): Promise<boolean> {
    if (!token) return false;
    const canonical = await this.labels.canonicalTokensNamed(chain.code, token.symbol, token.name);
    return canonical.some((t) => t.address !== address);
  }

  /**
   * Whether `address` is `honeypot_related_address` by the rug pull checker's stored verdicts,
   * leaving `exceptToken` out: a cheap read (two queries, no chain) that a token's cached verdict
   * is checked against, since its creator's link is part of it (`honeypot_with_same_creator`).
   */
  async honeypotRelated(
    chain: AuditChain,
    address: string,
    exceptToken?: string,
  ): Promise<boolean> {
    const link = await this.honeypotLink(chain, address, exceptToken);
    return forensicFlags([], { ...NO_CHAIN_FLAGS, ...link }).counts.honeypot_related_address > 0;
  }

  private async honeypotLink(
    chain: AuditChain,
    address: string,
    exceptToken: string | undefined,
  ): Promise<{ honeypotsCreated: string[]; isHoneypotToken: boolean }> {
    if (chain.addressFormat !== 'evm' || !this.config.AUDIT_HONEYPOT_CREATOR_LINK)
      return { honeypotsCreated: [], isHoneypotToken: false };
    const [honeypotsCreated, isHoneypotToken] = await Promise.all([
      // Tokens of this creator the rug pull checker found to be honeypots (ADR 0302 amendment).
      this.honeypots.createdBy(chain.code, address, exceptToken),
      // The address is itself such a token (ADR 0302, amendment: one finding, both products).
      address !== exceptToken
        ? this.honeypots.isHoneypot(chain.code, address)
        : Promise.resolve(false),
    ]);
    return { honeypotsCreated, isHoneypotToken };
  }

  /**
   * What a cached wallet verdict is keyed by besides the address: the load of the label packs
   * (a label added or dropped by a reload, of the address or of a counterparty), and the
   * address's nonce and native balance (two reads), so activity of its own since the verdict was
   * computed is never answered from the cache. Labels only without a node for the chain.
   */
  async stateVersion(chain: AuditChain, address: string): Promise<string> {
    const labels = `labels=${await this.labels.datasetVersion()}`;
    const client = this.chains.clientFor(chain);
    if (!client) return labels;
    try {
      return `${labels};${await walletStateVersion(client, address, nonceReadFor(chain))}`;
    } catch (error) {
      throw chainReadFailure(error);
    }
  }

  /**
   * Whether a cached verdict still holds for what its version does not cover: token transfers
   * from or to the address since the head it read (a transfer in moves neither its nonce nor
   * its balance). Two log reads over the blocks since, at each reuse (ADR 0306). A verdict cached before it kept its head is computed again.
   */
  async stillHolds(chain: AuditChain, address: string, cached: WalletAssessment): Promise<boolean> {
    const client = this.chains.clientFor(chain);
    if (!client || !cached.chainRead) return true;
    if (cached.headBlock === undefined || cached.headBlock === null) return false;
    try {
      return (await transfersSince(client, address, BigInt(cached.headBlock))) === 0;
    } catch (error) {
      throw chainReadFailure(error);
    }
  }

  /**
   * `exceptToken`: a token whose own stored verdict must not count as this creator's honeypot
   * (the rug pull check of that token, which would otherwise confirm its last verdict).
   */
  async assess(
    chain: AuditChain,
    address: string,
    options: { exceptToken?: string } = {},
  ): Promise<WalletAssessment> {
    const evm = chain.addressFormat === 'evm';
    const [own, { honeypotsCreated, isHoneypotToken }] = await Promise.all([
      this.labels.forAddresses(chain.code, evm, [address]),
      this.honeypotLink(chain, address, options.exceptToken),
    ]);
    const client = this.chains.clientFor(chain);
    let evidence: WalletEvidence | null = null;
    if (client) {
      const mixerPools = await this.labels.addressesIn(chain.code, evm, ['mixer']);
      try {
        evidence = await gatherWalletEvidence(client, address, {
          lookbackBlocks: this.config.AUDIT_LOOKBACK_BLOCKS,
          mixerPools,
          nonceVia: nonceReadFor(chain),
        });
      } catch (error) {
        throw chainReadFailure(error);
      }
    }
    const related = evidence
      ? await this.labels.forAddresses(chain.code, evm, [
          ...new Set([
            ...evidence.counterparties,
            ...evidence.createdContracts,
            ...evidence.tokensTouched,
            ...evidence.mixerInteractions.map((m) => m.pool),
          ]),
        ])
      : [];
    const byAddress = groupBy(related);
    const maliciousCreated = (evidence?.createdContracts ?? []).filter((c) =>
      byAddress.get(c)?.some((l) => l.category === 'malicious_contract'),
    );
    const flaggedCounterparties = (evidence?.counterparties ?? []).filter((c) =>
      byAddress.get(c)?.some((l) => EXPOSURE_CATEGORIES.has(l.category)),
    ).length;
    const impersonatesToken = await this.impersonates(chain, address, evidence?.token ?? null);
    const forensic = forensicFlags(own, {
      mixerInteractions: evidence?.mixerInteractions.length ?? 0,
      maliciousContractsCreated: maliciousCreated,
      impersonatesToken,
      honeypotsCreated,
      isHoneypotToken,
    });
    const now = this.clock.now().getTime();
    const features: WalletFeatures = {
      isContract: evidence?.isContract ?? false,
      txCount: evidence?.txCount ?? 0,
      holdsBalance: (evidence?.balanceWei ?? 0n) > 0n,
      transferCount: evidence?.transferCount ?? 0,
      ageDays: evidence?.firstSeenAt
        ? Math.max(0, Math.floor((now - evidence.firstSeenAt.getTime()) / 86_400_000))
        : null,
      flaggedCounterparties,
      counterparties: evidence?.counterparties.length ?? 0,
      contractsCreated: evidence?.createdContracts.length ?? 0,
    };
    // Without a node for the chain there is no history to read: a label-free address is scored
    // on labels alone and reported as not fraudulent rather than "New Address".
    const verdict = evidence
      ? walletVerdict(forensic.flagged, features)
      : forensic.flagged
        ? { status: 'Fraud' as const, probability: 1 }
        : { status: 'Not Fraud' as const, probability: 0.04 };
    const protocols = [
      ...new Set(
        related
          .filter(
            (l) =>
              l.category === 'canonical_token' ||
              (l.category === 'mixer' &&
                evidence?.mixerInteractions.some((m) => m.pool === l.address)),
          )
          .map((l) =>
            l.category === 'canonical_token'
              ? `${l.name ?? ''} (${String(l.extra?.['symbol'] ?? '')})`
              : (l.name ?? l.address),
          ),
      ),
    ].sort();
    return {
      status: verdict.status,
      probability: verdict.probability,
      counts: forensic.counts,
      sources: forensic.sources,
      token: evidence?.token?.symbol ?? evidence?.token?.name ?? null,
      sanctions: sanctionInputs(own),
      features,
      chainRead: evidence !== null,
      balanceWei: evidence ? evidence.balanceWei.toString() : null,
      protocols,
      headBlock: evidence ? evidence.head.toString() : null,
    };
  }
}

function groupBy(labels: readonly StoredLabel[]): Map<string, StoredLabel[]> {
  const out = new Map<string, StoredLabel[]>();
  for (const label of labels) out.set(label.address, [...(out.get(label.address) ?? []), label]);
  return out;
}

/** One sanction record per sanctions pack that lists the address; one isSanctioned:false row for a clean one. */
export function sanctionInputs(labels: readonly StoredLabel[]): SanctionRecordInput[] {
  const sanctioned = labels.filter((l) => l.category === 'sanctioned');
  if (sanctioned.length === 0)
    return [
      {
        sourceKey: 'none',
        category: null,
        name: null,
        description: null,
        url: null,
        isSanctioned: false,
      },
    ];
  return sanctioned.map((l) => ({
    sourceKey: `${l.pack}:${l.chain}`,
    category: 'OFAC SDN',
    name: l.name,
    description: `Listed by the U.S. Treasury OFAC Specially Designated Nationals list (pack ${l.pack}, snapshot ${l.sourceDate ?? 'unknown'})`,
    url: l.url,
    isSanctioned: true,
  }));
}
