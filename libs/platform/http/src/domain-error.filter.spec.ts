import type { ArgumentsHost } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import pino from 'pino';
import { DbJobGate } from '@meridian/platform-db';
import { DomainErrorFilter, httpAnswerOf } from './domain-error.filter';

describe('httpAnswerOf', () => {
  it('a dependency out of reach is 503 with Retry-After: 1', () => {
    const answer = httpAnswerOf(
      new DomainError('credentials_unavailable', 'unavailable', 'credentials cannot be checked'),
    );
    expect(answer).toEqual({
      status: 503,
      body: { error: 'credentials_unavailable', message: 'credentials cannot be checked' },
      headers: { 'Retry-After': '1' },
    });
  });

  it('a refusal that says when to come back keeps its own Retry-After; others have none', () => {
    const limited = new DomainError('rate_limited', 'rate_limited', 'slow down', {
      details: { retryAfterMs: 2_500 },
    });
    expect(httpAnswerOf(limited).headers).toEqual({ 'Retry-After': '3' });
    expect(httpAnswerOf(limited).body).not.toHaveProperty('retryAfterMs');
    expect(httpAnswerOf(new DomainError('not_found', 'not_found')).headers).toEqual({});
  });
});

describe('httpAnswerOf: Postgres out of reach', () => {
  const databaseUnavailable = {
    status: 503,
    body: {
      error: 'database_unavailable',
      message: 'the database cannot be reached right now; retry later',
    },
    headers: { 'Retry-After': '2' },
  };
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
    code: 'ECONNREFUSED',
  });

  it('is 503 database_unavailable with Retry-After, never a 500 internal', () => {
    expect(httpAnswerOf(new Error('Driver not Connected'))).toEqual(databaseUnavailable);
    expect(httpAnswerOf(refused)).toEqual(databaseUnavailable);
    expect(httpAnswerOf(new Error('Connection terminated unexpectedly'))).toEqual(
      databaseUnavailable,
    );
  });

  it('also as the cause of a 5xx DomainError; a 4xx keeps its code; a bug stays a 500', () => {
    const cause = { cause: refused };
    expect(httpAnswerOf(new DomainError('analysis_failed', 'internal', 'x', cause))).toEqual(
      databaseUnavailable,
    );
    expect(httpAnswerOf(new DomainError('usage_unavailable', 'unavailable', 'x', cause))).toEqual(
      databaseUnavailable,
    );
    expect(httpAnswerOf(new DomainError('not_found', 'not_found', 'x', cause)).status).toBe(404);
    expect(httpAnswerOf(new TypeError('x is undefined')).status).toBe(500);
  });
});

describe('DomainErrorFilter: what a 5xx logs', () => {
  const TOKEN = 'NODEACCESSTOKEN0123456789abcdef';
  const NODE = `https://user:${TOKEN}@node.example.com/v2/${TOKEN}?apikey=${TOKEN}`;

  /** The filter against a pino logger writing to `lines`, and what it answered. */
  function run(exception: unknown) {
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { level: 'trace' },
      { write: (line: string) => void lines.push(JSON.parse(line)) },
    );
    const sent: { status?: number; body?: unknown } = {};
    const reply = {
      status: (code: number) => ((sent.status = code), reply),
      header: () => reply,
      send: (body: unknown) => ((sent.body = body), reply),
    };
    const host = {
      switchToHttp: () => ({ getRequest: () => ({ id: 'req-1' }), getResponse: () => reply }),
    } as unknown as ArgumentsHost;
    new DomainErrorFilter(logger).catch(exception, host);
    return { lines, sent };
  }

  it('an error whose message, stack and cause quote a node URL logs origins only, no stack, not as err', () => {
    const failure = new Error(`request to ${NODE} failed`, {
      cause: Object.assign(new TypeError(`fetch failed: ${NODE}`), { code: 'ECONNREFUSED' }),
    });
    const { lines, sent } = run(failure);
    expect(sent).toEqual({
      status: 500,
      body: { error: 'internal', message: 'internal error', request_id: 'req-1' },
    });
    expect(lines).toHaveLength(1);
    expect(JSON.stringify(lines)).not.toContain(TOKEN);
    expect(lines[0]).not.toHaveProperty('err');
    expect(lines[0]).toMatchObject({
      level: 50,
      msg: 'request failed',
      request_id: 'req-1',
      error: {
        type: 'Error',
        message: 'request to https://node.example.com failed',
        cause: {
          type: 'TypeError',
          message: 'fetch failed: https://node.example.com',
          code: 'ECONNREFUSED',
        },
      },
    });
    expect(JSON.stringify(lines[0])).not.toContain('stack');
  });

  it('a DomainError 5xx keeps its code in the log; a 4xx is not logged', () => {
    const unavailable = new DomainError('node_down', 'unavailable', 'no node', {
      cause: new Error(`connect ${NODE}`),
    });
    const { lines } = run(unavailable);
    expect(lines[0]).toMatchObject({ error: { type: 'DomainError', code: 'node_down' } });
    expect(JSON.stringify(lines)).not.toContain(TOKEN);
    expect(run(new DomainError('bad', 'invalid', 'bad')).lines).toEqual([]);
  });
});

describe("DomainErrorFilter: a database outage is the gate's one line, not an error per 503", () => {
  const refused = () =>
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

  function filterOf(gate: DbJobGate | undefined) {
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { level: 'trace' },
      { write: (line: string) => void lines.push(JSON.parse(line)) },
    );
    const statuses: number[] = [];
    const reply = {
      status: (code: number) => (statuses.push(code), reply),
      header: () => reply,
      send: () => reply,
    };
    const host = {
      switchToHttp: () => ({ getRequest: () => ({ id: 'req-1' }), getResponse: () => reply }),
    } as unknown as ArgumentsHost;
    const filter = new DomainErrorFilter(logger, () => gate);
    return { lines, statuses, answer: (error: unknown) => filter.catch(error, host) };
  }

  it('five 503s while Postgres is stopped: the outage reported to the gate once, debug lines only', async () => {
    const dataSource = {
      isInitialized: true,
      query: async () => {
        throw refused();
      },
    };
    const log = { lost: jest.fn(), restored: jest.fn() };
    const gate = DbJobGate.of(dataSource).configure({ log, probeBackoffMs: [60_000] });
    const { lines, statuses, answer } = filterOf(gate);
    for (let i = 0; i < 5; i++) {
      answer(refused());
      await new Promise((resolve) => setImmediate(resolve));
    }
    gate.stop();
    expect(statuses).toEqual([503, 503, 503, 503, 503]);
    expect(log.lost).toHaveBeenCalledTimes(1);
    expect(gate.open).toBe(false);
    expect(lines.filter((line) => (line['level'] as number) >= 40)).toEqual([]);
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatchObject({ level: 20, request_id: 'req-1' });
  });

  it('Postgres answered the probe, or no gate (an app without Postgres): the error line', async () => {
    const answering = { isInitialized: true, query: async () => [{ one: 1 }] };
    const withGate = filterOf(DbJobGate.of(answering));
    withGate.answer(refused());
    await new Promise((resolve) => setImmediate(resolve));
    expect(withGate.lines).toMatchObject([{ level: 50, msg: 'request failed' }]);
    const without = filterOf(undefined);
    without.answer(refused());
    expect(without.lines).toMatchObject([{ level: 50, msg: 'request failed' }]);
  });
});
