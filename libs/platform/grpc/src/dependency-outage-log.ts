import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { isDomainError } from '@meridian/errors';
import type { Logger } from 'pino';

/** Why a call to a gRPC dependency failed, safe to log: status, stable code, message. */
export interface DependencyCause {
  /** grpc-js's name of the status (`UNAVAILABLE`, `DEADLINE_EXCEEDED`), when the call had one. */
  status?: string;
  /** The server's stable code (`database_unavailable`), from the `error-code` trailer. */
  code?: string;
  message: string;
}

/** The cause of a failed call: a DomainError of `fromGrpcError` (its ServiceError), or any error. */
export function dependencyCauseOf(error: unknown): DependencyCause {
  const inner = isDomainError(error) ? error.cause : error;
  const grpc =
    typeof inner === 'object' && inner !== null && typeof (inner as ServiceError).code === 'number'
      ? (inner as ServiceError)
      : undefined;
  const status = grpc ? GrpcStatus[grpc.code] : undefined;
  const message = isDomainError(error)
    ? error.message
    : error instanceof Error
      ? error.message
      : String(error);
  return {
    ...(status ? { status } : {}),
    ...(isDomainError(error) ? { code: error.code } : {}),
    message,
  };
}

/**
 * What a caller logs of a gRPC dependency it cannot ask (billing-ledger's credential calls from
 * rpc-gateway and webhook-matcher): each distinct cause once, at warn, while calls fail, and one
 * line when a call is answered again, as ConnectFailureLog (libs/platform/db) does for Postgres.
 * Not a level-50 line with a stack per request: every request meets the same outage, and the
 * client's answer (503, -32000) already says to retry.
 */
export class DependencyOutageLog {
  private readonly logged = new Set<string>();
  private sinceMs: number | undefined;
  private firstCause: DependencyCause | undefined;

  constructor(
    private readonly logger: Pick<Logger, 'warn' | 'info'>,
    /** Who cannot be asked (`billing-ledger`). */
    private readonly dependency: string,
    /** What it means meanwhile (`new access tokens are refused with -32000, retry later`). */
    private readonly meanwhile: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** A call failed: logged if its cause is new in this outage. */
  failed(error: unknown): void {
    const cause = dependencyCauseOf(error);
    this.sinceMs ??= this.now();
    this.firstCause ??= cause;
    const key = `${cause.status ?? ''}\n${cause.code ?? ''}\n${cause.message}`;
    if (this.logged.has(key)) return;
    this.logged.add(key);
    this.logger.warn(
      { dependency: this.dependency, cause },
      `${this.dependency} cannot be asked: ${describe(cause)}; ${this.meanwhile} ` +
        '(logged once per cause until it answers)',
    );
  }

  /** A call was answered: the end of an outage, if one was logged. */
  answered(): void {
    if (this.sinceMs === undefined) return;
    const downMs = this.now() - this.sinceMs;
    const was = this.firstCause!;
    this.sinceMs = undefined;
    this.firstCause = undefined;
    this.logged.clear();
    this.logger.info(
      { dependency: this.dependency, downMs, cause: was },
      `${this.dependency} answers again after ${(downMs / 1_000).toFixed(1)} s (was: ${describe(was)})`,
    );
  }
}

function describe(cause: DependencyCause): string {
  const label = [cause.status, cause.code].filter(Boolean).join(' ');
  return label ? `${label}: ${cause.message}` : cause.message;
}
