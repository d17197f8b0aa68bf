import type { ArgumentsHost, ExecutionContext } from '@nestjs/common';
import { parseConfig } from '@meridian/platform-config';
import { DomainErrorFilter } from '@meridian/platform-http';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Registry } from 'prom-client';
import { configSchema } from '../config/config';
import { ApiKeyGuard } from './api-key.guard';
import { GrpcCredentialSource } from './grpc-credential-source';

/**
 * QA, operator angle: with billing-ledger out of reach every API-key check (the filter's 5xx
 * line for `credentials_unavailable`) and every webhook write, which reads the account's plan and
 * balance (`accountFacts`, `billing_unavailable`), was a level-50 line per request, while cached
 * API keys still passed. Now each cause is one warn line per outage and the answers stay 503. The
 * ledger here is a port nothing listens on (a real refused connection, UNAVAILABLE).
 */
describe('billing-ledger out of reach: one warn line per cause, answers 503', () => {
  it('API-key checks', async () => {
    const { answers, errorLines, warned } = await threeRequests((source, i) => {
      const request = { id: `r${i}`, headers: { authorization: `Bearer mk_key_${i}` } };
      return { request, attempt: new ApiKeyGuard(source).canActivate(contextOf(request)) };
    });
    expect(answers).toEqual(Array(3).fill([503, 'credentials_unavailable']));
    expect(errorLines).toEqual([]);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(/^billing-ledger cannot be asked: UNAVAILABLE /);
  });

  it('account state reads (accountFacts)', async () => {
    const { answers, errorLines, warned } = await threeRequests((source, i) => ({
      request: { id: `r${i}`, headers: {} },
      attempt: source.accountFacts(`acc_${i}`),
    }));
    expect(answers).toEqual(Array(3).fill([503, 'billing_unavailable']));
    expect(errorLines).toEqual([]);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(/^billing-ledger cannot be asked: UNAVAILABLE .*billing_unavailable/);
  });
});

/** Three requests against an unreachable ledger, each answered by the app's error filter. */
async function threeRequests(
  make: (source: GrpcCredentialSource, i: number) => { request: object; attempt: Promise<unknown> },
) {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
        done();
      },
    }),
  );
  const config = parseConfig(configSchema, {
    HTTP_PORT: '0',
    DATABASE_URL: 'postgres://app:pw@127.0.0.1:5432/meridian',
    BILLING_GRPC_URL: '127.0.0.1:1',
    WEBHOOK_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
  });
  const source = GrpcCredentialSource.fromConfig(config, logger, new Registry());
  const filter = new DomainErrorFilter(logger);
  const answers: Array<[number, string]> = [];
  try {
    for (let i = 0; i < 3; i += 1) {
      const { request, attempt } = make(source, i);
      const error = await attempt.then(
        () => undefined,
        (e: unknown) => e,
      );
      const answer = { status: 0, body: undefined as unknown };
      filter.catch(error, hostOf(request, answer));
      answers.push([answer.status, (answer.body as { error: string }).error]);
    }
  } finally {
    source.close();
  }
  return {
    answers,
    errorLines: lines.filter((line) => line.level >= 50),
    warned: lines.filter((line) => line.level === 40).map((line) => line.msg),
  };
}

function contextOf(request: object): ExecutionContext {
  return { switchToHttp: () => ({ getRequest: () => request }) } as unknown as ExecutionContext;
}

function hostOf(request: object, answer: { status: number; body: unknown }): ArgumentsHost {
  const reply = {
    header: () => reply,
    status: (status: number) => ((answer.status = status), reply),
    send: (body: unknown) => ((answer.body = body), reply),
  };
  return {
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }),
  } as unknown as ArgumentsHost;
}
