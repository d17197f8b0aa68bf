import { billingV1 } from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import { causeLoggedOnce } from '@meridian/platform-http';
import {
  billingGrpcClientOf,
  DependencyOutageLog,
  type BillingGrpcClient,
  type TlsReloadLogger,
} from '@meridian/platform-grpc';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { AppConfig } from '../config/config';
import type { AccountFacts, ApiKeyPrincipal, CredentialSource } from './credential-source';

type AccountState = billingV1.AccountState;

/** billing.v1 ResolveApiKey / GetAccountState on billing-ledger. */
export class GrpcCredentialSource implements CredentialSource {
  /** As the app runs it: `billingGrpcClientOf` (its client certificate in the app's registry). */
  static fromConfig(
    config: AppConfig,
    logger: TlsReloadLogger & Pick<Logger, 'warn' | 'info'>,
    registry: Registry,
  ) {
    return new GrpcCredentialSource(billingGrpcClientOf(config, { logger, registry }), logger);
  }

  /**
   * billing-ledger out of reach for API keys (its Postgres down, the ledger stopped): one warn
   * line per cause and one when it answers again, not an error line per request (QA).
   */
  private readonly outages: DependencyOutageLog;

  /**
   * The same for account state (plan, caps, balance), read when webhooks and address lists are
   * written: its own log, since those writes fail while cached API keys still pass (QA: an
   * error line per request, code billing_unavailable).
   */
  private readonly stateOutages: DependencyOutageLog;

  private constructor(
    private readonly client: BillingGrpcClient,
    logger: Pick<Logger, 'warn' | 'info'>,
  ) {
    this.outages = new DependencyOutageLog(
      logger,
      'billing-ledger',
      'API keys not cached answer 503 credentials_unavailable',
    );
    this.stateOutages = new DependencyOutageLog(
      logger,
      'billing-ledger',
      'requests that read the account state (plan, balance) answer 503 billing_unavailable',
    );
  }

  async resolveApiKey(key: string): Promise<ApiKeyPrincipal | null> {
    let response;
    try {
      response = await this.client.resolveApiKey({ key });
    } catch (error) {
      this.outages.failed(error);
      throw error;
    }
    this.outages.answered();
    if (!response.found) return null;
    return { keyId: response.keyId, accountId: response.accountId, scopes: [...response.scopes] };
  }

  async accountFacts(accountId: string): Promise<AccountFacts> {
    let state: AccountState | undefined;
    try {
      state = (await this.client.getAccountState({ accountId })).account;
    } catch (cause) {
      this.stateOutages.failed(cause);
      // Its cause is logged once per outage (above), not per request.
      throw causeLoggedOnce(
        new DomainError(
          'billing_unavailable',
          'unavailable',
          'account state cannot be read right now; try again',
          { cause },
        ),
      );
    }
    this.stateOutages.answered();
    if (!state)
      throw new DomainError(
        'billing_unavailable',
        'unavailable',
        'billing answered no account state',
      );
    return factsOf(state);
  }

  close(): void {
    this.client.close();
  }
}

export function factsOf(state: AccountState): AccountFacts {
  const w = state.caps?.webhooks;
  const balance = state.balance;
  const exhaustedSince = balance?.exhaustedSince
    ? new Date(
        Number(balance.exhaustedSince.seconds) * 1000 +
          Math.floor(balance.exhaustedSince.nanos / 1e6),
      )
    : null;
  return {
    accountId: state.accountId,
    planId: state.planId || null,
    accountType: state.accountType === billingV1.AccountType.TEAM ? 'team' : 'individual',
    nodeOwner: state.nodeOwner,
    caps: {
      activeWebhooks: w?.activeWebhooks ?? 0,
      addressesPerWebhook: w?.addressesPerWebhook ?? 0,
      addressesPerAccount: w?.addressesPerAccount ?? 0,
      eventsPerSecond: w?.eventsPerSecond ?? 0,
      eventsBurst: w?.eventsBurst ?? 0,
      inlineAddresses: w?.inlineAddresses ?? 0,
      listRefs: w?.listRefs ?? 0,
      addressLists: w?.addressLists ?? 0,
      addressesPerList: w?.addressesPerList ?? 0,
    },
    exhausted: balance?.status === billingV1.BalanceStatus.EXHAUSTED,
    exhaustedSince,
    allowanceCu: Number(balance?.allowanceCu ?? 0n),
    purchasedCu: Number(balance?.purchasedCu ?? 0n),
    pendingTopUpCu: Number(balance?.pendingTopUpCu ?? 0n),
    version: Number(state.version),
  };
}
