import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { billingV1 } from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import { DbJobGate, isDatabaseUnreachable } from '@meridian/platform-db';
import {
  grpcService,
  reportedGrpcTlsOf,
  startGrpcServer,
  type GrpcServiceImplementation,
  type RunningGrpcServer,
} from '@meridian/platform-grpc';
import { LOGGER, ReadinessRegistry } from '@meridian/platform-observability';
import type { Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { AccountsService } from '../accounts/accounts.service';
import { CLOCK } from '../clock/clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { CredentialsService } from '../credentials/credentials.service';
import { parseId } from '../ids';
import { accountStateMessage } from './account-state.message';

type BillingMethods = (typeof billingV1.BillingService)['method'];

/**
 * billing.v1.BillingService on GRPC_PORT. Unknown, deleted and revoked credentials answer OK
 * with found=false (see billing.proto); an unknown account id in GetAccountState is NOT_FOUND.
 */
@Injectable()
export class BillingGrpcServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private server: RunningGrpcServer | undefined;
  /** The bound port (GRPC_PORT, or the one the OS chose for port 0). */
  port: number | undefined;

  constructor(
    private readonly credentials: CredentialsService,
    private readonly accounts: AccountsService,
    private readonly readiness: ReadinessRegistry,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly registry: Registry,
    private readonly gate: DbJobGate,
  ) {}

  readonly implementation: GrpcServiceImplementation<BillingMethods> = databaseOutagesMapped(
    {
      resolveAccessToken: async ({ token }) => {
        const resolved = await this.credentials.resolveAccessToken(token);
        if (!resolved) return { found: false };
        return {
          found: true,
          tokenId: resolved.token.id,
          accountId: resolved.account.accountId,
          networkKey: resolved.token.network,
          planId: resolved.account.planId ?? '',
          account: accountStateMessage(resolved.account, this.clock.now()),
        };
      },
      resolveApiKey: async ({ key }) => {
        const resolved = await this.credentials.resolveApiKey(key);
        if (!resolved) return { found: false };
        return {
          found: true,
          keyId: resolved.key.id,
          accountId: resolved.account.accountId,
          scopes: resolved.key.scopes,
          planId: resolved.account.planId ?? '',
          account: accountStateMessage(resolved.account, this.clock.now()),
        };
      },
      getAccountState: async ({ accountId }) => {
        if (!accountId)
          throw new DomainError('invalid_account_id', 'invalid', 'account_id is required');
        // Not the shape of our ids: NOT_FOUND like an unknown id, and never sent to a query (a NUL
        // byte in it failed the query as INTERNAL; found by the public-edges fuzz suite).
        const id = parseId('acc', accountId, 'account not found');
        return { account: accountStateMessage(await this.accounts.get(id), this.clock.now()) };
      },
    },
    (error) => void this.gate.failed(error),
  );

  async onApplicationBootstrap(): Promise<void> {
    this.server = await startGrpcServer({
      host: this.config.HTTP_HOST,
      port: this.config.GRPC_PORT,
      services: [grpcService(billingV1.BillingService, this.implementation)],
      // grpc_server_handled_total, grpc_server_handling_seconds (deploy/README.md, "Alerts").
      registry: this.registry,
      // A renewed certificate is served without a restart; a broken one is refused (ADR 0506).
      // grpc_tls_certificate_not_after_seconds{tls="billing.v1",role="server"}.
      tls: reportedGrpcTlsOf(this.config, {
        tls: 'billing.v1',
        logger: this.logger,
        registry: this.registry,
      }),
    });
    this.port = this.server.port;
    this.readiness.register('grpc', async () => {
      if (!this.server) throw new Error('gRPC server not running');
    });
    this.logger.info({ port: this.port, tls: tlsModeOf(this.config) }, 'billing.v1 gRPC listening');
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await server?.close(2_000);
  }
}

/** What the log says about the transport: plaintext, TLS, or mutual TLS. */
function tlsModeOf(config: AppConfig): 'plaintext' | 'tls' | 'mutual-tls' {
  if (!config.GRPC_TLS_CERT_FILE) return 'plaintext';
  return config.GRPC_TLS_CLIENT_AUTH === 'require' ? 'mutual-tls' : 'tls';
}

/**
 * The answer to a call while Postgres is out of reach: UNAVAILABLE (retry later), naming the
 * database, as the REST edges' 503 `database_unavailable` (libs/platform/http) does, not INTERNAL
 * "internal error", which told the gateway and webhook-matcher nothing of the cause (QA).
 */
export const DATABASE_UNAVAILABLE_GRPC = {
  code: 'database_unavailable',
  message: "billing-ledger's database cannot be reached right now; retry later",
} as const;

/**
 * Each method of `implementation` with a lost database (isDatabaseUnreachable, the one
 * classifier) answered as DATABASE_UNAVAILABLE_GRPC and reported (`outage`: the app's DbJobGate,
 * which confirms it and logs the outage once, and once when Postgres answers again). Any other
 * error is thrown on as it was.
 */
export function databaseOutagesMapped<
  T extends Record<string, (...args: never[]) => Promise<unknown>>,
>(implementation: T, outage: (error: unknown) => void): T {
  const mapped: Record<string, (...args: never[]) => Promise<unknown>> = {};
  for (const [name, method] of Object.entries(implementation))
    mapped[name] = async (...args) => {
      try {
        return await method(...args);
      } catch (error) {
        if (!isDatabaseUnreachable(error)) throw error;
        outage(error);
        throw new DomainError(
          DATABASE_UNAVAILABLE_GRPC.code,
          'unavailable',
          DATABASE_UNAVAILABLE_GRPC.message,
          { cause: error },
        );
      }
    };
  return mapped as T;
}
