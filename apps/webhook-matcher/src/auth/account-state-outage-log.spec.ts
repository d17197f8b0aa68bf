import type { ArgumentsHost } from '@nestjs/common';
import { parseConfig } from '@meridian/platform-config';
import { DomainErrorFilter } from '@meridian/platform-http';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Registry } from 'prom-client';
import { configSchema } from '../config/config';
import { GrpcCredentialSource } from './grpc-credential-source';

/**
 * QA, operator angle: with billing-ledger out of reach every webhook write (which reads the
 * account's plan and balance: `accountFacts`) was a level-50 `billing_unavailable` line per
 * request, while API keys, cached, still passed. As for API keys (credential-outage-log.spec),
 * the cause is now one warn line per outage and the answers stay 503 billing_unavailable. The
 * ledger here is a port nothing listens on (a real refused connection, UNAVAILABLE).
 */
describe('account state reads while billing-ledger is out of reach', () => {
  it('log the cause once at warn, not an error line per request, and answer 503', async () => {
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
    const answers: Array<{ status: number; body: unknown }> = [];
    try {
      for (let i = 0; i < 3; i += 1) {
        const request = { id: `r${i}`, headers: {} };
        const error = await source.accountFacts(`acc_${i}`).then(
          () => undefined,
          (e: unknown) => e,
        );
        const answer = { status: 0, body: undefined as unknown };
        filter.catch(error, hostOf(request, answer));
        answers.push(answer);
      }
    } finally {
      source.close();
    }
    expect(answers.map((a) => [a.status, (a.body as { error: string }).error])).toEqual([
      [503, 'billing_unavailable'],
      [503, 'billing_unavailable'],
      [503, 'billing_unavailable'],
    ]);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    const warned = lines.filter((line) => line.level === 40).map((line) => line.msg);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(/^billing-ledger cannot be asked: UNAVAILABLE .*billing_unavailable/);
  });
});

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
