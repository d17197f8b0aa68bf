import { ArgumentsHost, Catch, ExceptionFilter, Inject, Optional } from '@nestjs/common';
import { DbJobGate } from '@meridian/platform-db';
import { DomainError } from '@meridian/errors';
import { DomainErrorFilter } from '@meridian/platform-http';
import { LOGGER, loggableError } from '@meridian/platform-observability';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { UPSTREAM_UNAVAILABLE } from './audit-errors';

/**
 * The platform filter with one audit rule on top: upstream node trouble is 502 (COMPAT), not the
 * platform's 503 for `unavailable`. Same body shape: {"error", "message", "request_id"}.
 */
@Catch()
export class AuditErrorFilter implements ExceptionFilter {
  private readonly platform: DomainErrorFilter;

  constructor(
    @Inject(LOGGER) private readonly logger: Logger,
    @Optional() gate?: DbJobGate,
  ) {
    this.platform = new DomainErrorFilter(logger, () => gate);
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
    // The platform filter logs a 5xx cleaned (loggableError): node URLs as origins, no stack.
    this.platform.catch(exception, host);
  }
}
