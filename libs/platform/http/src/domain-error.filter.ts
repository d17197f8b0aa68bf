import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import { DomainError, httpStatusOf } from '@meridian/errors';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

/**
 * The one place a REST app maps errors to HTTP: `{"error": code, "message", "request_id"}`.
 * DomainErrors keep their code; framework errors (bad JSON, body too large, unknown route) get a
 * stable code too; anything else is a 500 `internal` with nothing internal leaked.
 */
@Catch()
export class DomainErrorFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const request = http.getRequest<FastifyRequest>();
    const requestId = String(request.id);
    const { status, body, headers } = this.map(exception);
    if (status >= 500)
      this.logger.error({ err: exception, request_id: requestId }, 'request failed');
    for (const [name, value] of Object.entries(headers)) void reply.header(name, value);
    void reply.status(status).send({ ...body, request_id: requestId });
  }

  private map(exception: unknown): {
    status: number;
    body: Record<string, unknown>;
    headers: Record<string, string>;
  } {
    if (exception instanceof DomainError) {
      const headers: Record<string, string> = {};
      const retryAfterMs = exception.details?.['retryAfterMs'];
      if (typeof retryAfterMs === 'number')
        headers['Retry-After'] = String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
      const { retryAfterMs: _omit, ...details } = exception.details ?? {};
      return {
        status: httpStatusOf[exception.kind],
        body: { error: exception.code, message: exception.message, ...details },
        headers,
      };
    }
    const frameworkStatus = statusOfFrameworkError(exception);
    if (frameworkStatus !== undefined) {
      const code = frameworkCodes[frameworkStatus] ?? 'bad_request';
      return {
        status: frameworkStatus,
        body: { error: code, message: messageOf(exception) },
        headers: {},
      };
    }
    return { status: 500, body: { error: 'internal', message: 'internal error' }, headers: {} };
  }
}

const frameworkCodes: Record<number, string> = {
  400: 'malformed_body',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'request_too_large',
  415: 'unsupported_media_type',
};

function statusOfFrameworkError(exception: unknown): number | undefined {
  if (exception instanceof HttpException) return exception.getStatus();
  const statusCode = (exception as { statusCode?: unknown } | null)?.statusCode;
  return typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500
    ? statusCode
    : undefined;
}

function messageOf(exception: unknown): string {
  if (exception instanceof HttpException) {
    const response = exception.getResponse();
    if (typeof response === 'object' && response && 'message' in response)
      return String((response as { message: unknown }).message);
  }
  return exception instanceof Error ? exception.message : 'bad request';
}
