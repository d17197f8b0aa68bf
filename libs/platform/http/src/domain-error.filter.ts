import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import { DomainError, httpStatusOf } from '@meridian/errors';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { loggableError } from '@meridian/platform-observability';
import { isDatabaseUnreachable, type DbJobGate } from '@meridian/platform-db';
import type { Logger } from 'pino';
import { MethodNotAllowedError } from './method-not-allowed';
import { isCauseLoggedOnce } from './outage-logged';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  DATABASE_UNAVAILABLE,
  DATABASE_UNAVAILABLE_MESSAGE,
} from './database-unavailable';

/**
 * The one place a REST app maps errors to HTTP: `{"error": code, "message", "request_id"}`.
 * DomainErrors keep their code; framework errors (bad JSON, body too large, unknown route) get a
 * stable code too; Postgres out of reach is a 503 `database_unavailable` with Retry-After;
 * anything else is a 500 `internal` with nothing internal leaked.
 */
/**
 * Where a request's database outage is reported: the app's `DbJobGate` (DbModule's), found
 * when the first outage comes; undefined in an app with no Postgres.
 */
export type DbOutageReporter = () => Pick<DbJobGate, 'failed'> | undefined;

@Catch()
export class DomainErrorFilter implements ExceptionFilter {
  constructor(
    private readonly logger: Logger,
    private readonly outages?: DbOutageReporter,
    /** The app's body limit, named in a 413's message. */
    private readonly bodyLimitBytes?: number,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const request = http.getRequest<FastifyRequest>();
    const requestId = String(request.id);
    const { status, body, headers } = httpAnswerOf(exception, this.bodyLimitBytes);
    // Cleaned, never as `err`: an error's message, stack or cause can quote a node URL with its
    // access token (viem's HttpRequestError does); loggableError keeps origins only, no stack.
    if (body['error'] === DATABASE_UNAVAILABLE) this.databaseUnavailable(exception, requestId);
    // Its cause is logged once per outage where it was met (causeLoggedOnce).
    else if (status >= 500 && isCauseLoggedOnce(exception))
      this.logger.debug(
        { error: loggableError(exception), request_id: requestId },
        'request failed: dependency outage (logged once per cause)',
      );
    else if (status >= 500)
      this.logger.error(
        { error: loggableError(exception), request_id: requestId },
        'request failed',
      );
    for (const [name, value] of Object.entries(headers)) void reply.header(name, value);
    void reply.status(status).send({ ...body, request_id: requestId });
  }

  /**
   * A 503 `database_unavailable`: reported to the app's DbJobGate, which confirms it with its
   * probe and logs the outage once ("Postgres unreachable", then "answers again"); each answer
   * is then a debug line, not an error per request. Not confirmed (Postgres answered the probe,
   * or no gate): the error line, as any 5xx.
   */
  private databaseUnavailable(exception: unknown, requestId: string): void {
    const fields = { error: loggableError(exception), request_id: requestId };
    const gate = this.outages?.();
    if (!gate) {
      this.logger.error(fields, 'request failed');
      return;
    }
    void gate.failed(exception).then((outage) => {
      if (outage) this.logger.debug(fields, 'request failed: Postgres unreachable (503)');
      else this.logger.error(fields, 'request failed');
    });
  }
}

/** Status, body (without request_id) and headers of the answer to `exception`. */
export function httpAnswerOf(
  exception: unknown,
  bodyLimitBytes?: number,
): {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
} {
  // A lost database surfaces as the driver's error, or as the cause of a DomainError for a 5xx
  // (audit-api's analysis_failed, billing-ledger's usage_unavailable): one code for the outage.
  // A refusal of the request itself (4xx) keeps its code.
  // A body the client stopped sending (its socket reset: code ECONNRESET) is the framework's
  // 4xx, never a database outage (QA: it was answered 503 and reported to the outage gate).
  const refusal =
    (exception instanceof DomainError && httpStatusOf[exception.kind] < 500) ||
    statusOfFrameworkError(exception) !== undefined;
  if (!refusal && isDatabaseUnreachable(exception))
    return {
      status: 503,
      body: { error: DATABASE_UNAVAILABLE, message: DATABASE_UNAVAILABLE_MESSAGE },
      headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
    };
  if (exception instanceof DomainError) {
    const headers: Record<string, string> = {};
    const status = httpStatusOf[exception.kind];
    const retryAfterMs = exception.details?.['retryAfterMs'];
    if (typeof retryAfterMs === 'number')
      headers['Retry-After'] = String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
    // A dependency out of reach (503): come back in a second, as the gateway says (RFC 9110).
    else if (status === 503) headers['Retry-After'] = '1';
    const { retryAfterMs: _omit, ...details } = exception.details ?? {};
    return {
      status,
      body: { error: exception.code, message: exception.message, ...details },
      headers,
    };
  }
  if (exception instanceof MethodNotAllowedError) {
    return {
      status: 405,
      body: { error: 'method_not_allowed', message: messageOf(exception) },
      headers: { Allow: exception.allow.join(', ') },
    };
  }
  const frameworkStatus = statusOfFrameworkError(exception);
  const known = fastifyErrors[(exception as { code?: string } | null)?.code ?? ''];
  if (frameworkStatus === 413) {
    const message = tooLargeMessage(bodyLimitBytes);
    return { status: 413, body: { error: 'request_too_large', message }, headers: {} };
  }
  if (frameworkStatus !== undefined && known) {
    return { status: frameworkStatus, body: { error: known[0], message: known[1] }, headers: {} };
  }
  if (frameworkStatus !== undefined) {
    const code = frameworkCodes[frameworkStatus] ?? 'bad_request';
    return {
      status: frameworkStatus,
      body: { error: code, message: frameworkMessages[frameworkStatus] ?? messageOf(exception) },
      headers: {},
    };
  }
  return { status: 500, body: { error: 'internal', message: 'internal error' }, headers: {} };
}

const UNSUPPORTED_MEDIA_TYPE_MESSAGE =
  'request bodies are JSON: send content-type application/json';

/** A 413's message, naming the limit when the app gave it (QA: "which limit?"). */
function tooLargeMessage(limitBytes: number | undefined): string {
  if (limitBytes === undefined) return 'the request body is over the size limit';
  const [size, unit] =
    limitBytes >= MIB && limitBytes % MIB === 0
      ? [limitBytes / MIB, 'MiB']
      : limitBytes >= KIB && limitBytes % KIB === 0
        ? [limitBytes / KIB, 'KiB']
        : [limitBytes, 'bytes'];
  return `the request body is over the size limit of ${size.toLocaleString('en-US')} ${unit}`;
}
const KIB = 1024;
const MIB = 1024 * KIB;

/** Fastify's own errors by their code, with a fixed message (theirs repeats the whole URL). */
const fastifyErrors: Record<string, [code: string, message: string]> = {
  FST_ERR_BAD_URL: ['invalid_url', 'the URL is not valid (malformed percent-encoding)'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported_media_type', UNSUPPORTED_MEDIA_TYPE_MESSAGE],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [
    'malformed_body',
    'the body length does not match content-length',
  ],
};

const frameworkCodes: Record<number, string> = {
  400: 'malformed_body',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'request_too_large',
  415: 'unsupported_media_type',
};

/**
 * Our wording of the framework's refusals of a body, by status: Nest hands fastify's
 * body-parser errors to the filter as an HttpException with fastify's text ("Unsupported Media
 * Type") and without fastify's code, so they are known by status here (QA F4).
 */
const frameworkMessages: Record<number, string> = {
  415: UNSUPPORTED_MEDIA_TYPE_MESSAGE,
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
