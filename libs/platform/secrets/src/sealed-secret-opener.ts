import { DomainError } from '@meridian/errors';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { isSealedSecretError, type SecretKeyRing } from './secret-box-ring';

/** What one use of the ring names in its metric, its log line and its 503. */
export interface SealedSecretOpenerOptions {
  /** The counter of values the ring could not open, labelled by `reason`. */
  metric: { name: string; help: string };
  /** The log field naming whose value it is (`userId`, `webhookId`). */
  subjectField: string;
  /** The error log line of a value that does not open. */
  logMessage: string;
  /** The message of the 503 `secret_unavailable`. */
  unavailableMessage: string;
}

/**
 * Seals under the ring's current key and opens under any of its keys (ADR 0424, 0603). A value
 * the ring cannot open is never a 500: logged at error level (subject, reason, key id), counted
 * (`reason`: unknown_key, not_opened, malformed) and thrown as a retryable 503
 * `secret_unavailable`, since the key may come back (a rotation done out of order) and the
 * value is left as it is.
 */
export class SealedSecretOpener {
  private readonly refused: Counter<'reason'>;

  constructor(
    readonly ring: SecretKeyRing,
    private readonly logger: Logger,
    registry: Registry,
    private readonly options: SealedSecretOpenerOptions,
  ) {
    const { name, help } = options.metric;
    // One counter per registry: a second opener over the same registry counts into it.
    this.refused =
      (registry.getSingleMetric(name) as Counter<'reason'> | undefined) ??
      new Counter({ name, help, labelNames: ['reason'], registers: [registry] });
  }

  seal(plaintext: string): string {
    return this.ring.seal(plaintext);
  }

  /** The value in clear; `subjectId` only names it in the log. */
  open(subjectId: string, sealed: string): string {
    try {
      return this.ring.open(sealed);
    } catch (error) {
      if (!isSealedSecretError(error)) throw error;
      this.refused.inc({ reason: error.reason });
      this.logger.error(
        {
          [this.options.subjectField]: subjectId,
          reason: error.reason,
          keyId: error.keyId,
          err: error.message,
        },
        this.options.logMessage,
      );
      throw new DomainError('secret_unavailable', 'unavailable', this.options.unavailableMessage, {
        retryable: true,
        cause: error,
      });
    }
  }
}
