import { ArgumentsHost, Catch, ExceptionFilter, Inject } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import { DomainErrorFilter } from '@meridian/platform-http';
import { LOGGER, loggableError, redactUrls } from '@meridian/platform-observability';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { BaseError } from 'viem';
import { UPSTREAM_UNAVAILABLE } from './audit-errors';

/**
 * The platform filter with one audit rule on top: upstream node trouble is 502 (COMPAT), not the
 * platform's 503 for `unavailable`. Same body shape: {"error", "message", "request_id"}.
 */
@Catch()
export class AuditErrorFilter implements ExceptionFilter {
  private readonly platform: DomainErrorFilter;

  constructor(@Inject(LOGGER) private readonly logger: Logger) {
    this.platform = new DomainErrorFilter(logger);
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    if (exception instanceof DomainError && exception.code === UPSTREAM_UNAVAILABLE) {
      const http = host.switchToHttp();
      const request = http.getRequest<FastifyRequest>();
      this.logger.warn(
        // The cause is a viem error whose message and stack quote the node URL, access token
        // included: logged cleaned (origin only, no stack), never as `err`.
        { cause: loggableError(exception.cause), request_id: String(request.id) },
        'audit upstream unavailable',
      );
      void http
        .getResponse<FastifyReply>()
        .status(502)
        .header('Retry-After', '5')
        .send({
          error: exception.code,
          message: exception.message,
          request_id: String(request.id),
        });
      return;
    }
    this.platform.catch(withoutNodeUrls(exception), host);
  }
}

/**
 * The exception the platform filter answers and logs (5xx with `err`), with the node URL gone from
 * what it logs: a DomainError keeps code, kind, message and details (so the same answer) with its
 * cause cleaned; a viem error that escaped (500 either way) becomes a plain Error with every URL in
 * its message and stack reduced to the origin. Anything else is passed as it is.
 */
function withoutNodeUrls(exception: unknown): unknown {
  if (exception instanceof DomainError) {
    if (exception.cause === undefined) return exception;
    const clean = new DomainError(exception.code, exception.kind, exception.message, {
      retryable: exception.retryable,
      ...(exception.details ? { details: exception.details } : {}),
      cause: loggableError(exception.cause),
    });
    clean.stack = exception.stack;
    return clean;
  }
  if (exception instanceof BaseError) {
    const clean = new Error(redactUrls(exception.message), {
      cause: exception.cause === undefined ? undefined : loggableError(exception.cause),
    });
    clean.name = exception.name;
    clean.stack = redactUrls(exception.stack ?? '');
    return clean;
  }
  return exception;
}
