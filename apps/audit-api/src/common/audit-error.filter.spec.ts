import type { ArgumentsHost } from '@nestjs/common';
import pino from 'pino';
import { ContractFunctionExecutionError, HttpRequestError } from 'viem';
import { AuditErrorFilter } from './audit-error.filter';
import { analysisFailed, upstreamUnavailable } from './audit-errors';

const TOKEN = 'QAEFAKEACCESSTOKEN0123456789abcdef0123';
const NODE = `https://user:${TOKEN}@eth.example.com/v2/${TOKEN}?apikey=${TOKEN}`;

/** A viem error as a refused node gives it: message, details and stack quote the node URL. */
function nodeError(): HttpRequestError {
  return new HttpRequestError({
    url: NODE,
    details: `fetch failed: ${NODE}`,
    body: { method: 'eth_getCode' },
    cause: new TypeError('fetch failed'),
  });
}

/** The filter against a pino logger writing to `lines` and a reply recording what was sent. */
function run(exception: unknown) {
  const lines: string[] = [];
  const filter = new AuditErrorFilter(
    pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) }),
  );
  const sent: { status?: number; body?: Record<string, unknown> } = {};
  const reply = {
    status(code: number) {
      sent.status = code;
      return reply;
    },
    header: () => reply,
    send(body: Record<string, unknown>) {
      sent.body = body;
      return reply;
    },
  };
  const host = {
    switchToHttp: () => ({ getRequest: () => ({ id: 'req-1' }), getResponse: () => reply }),
  } as unknown as ArgumentsHost;
  filter.catch(exception, host);
  return { logged: lines.join(''), lines, sent };
}

describe('AuditErrorFilter: the node URL and its token never reach the log (QA E D1)', () => {
  it('a 502 logs the cause cleaned: origin only, no stack', () => {
    const { logged, sent } = run(upstreamUnavailable(nodeError()));
    expect([sent.status, sent.body?.['error']]).toEqual([502, 'upstream_unavailable']);
    expect(logged).not.toContain(TOKEN);
    expect(logged).toContain('https://eth.example.com');
    expect(logged).toContain('HttpRequestError');
  });

  it('a 500 analysis_failed whose cause chain holds a node error logs no token, same answer', () => {
    const cause = new ContractFunctionExecutionError(nodeError(), {
      abi: [],
      functionName: 'owner',
      contractAddress: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
    });
    expect(JSON.stringify({ m: cause.message, s: cause.stack })).toContain(TOKEN); // the premise
    const { logged, sent } = run(analysisFailed(cause));
    expect([sent.status, sent.body?.['error']]).toEqual([500, 'analysis_failed']);
    expect(logged).toContain('request failed');
    expect(logged).not.toContain(TOKEN);
  });

  it('a viem error that escaped unmapped is still 500 internal and logged without the token', () => {
    const { logged, sent } = run(nodeError());
    expect([sent.status, sent.body?.['error']]).toEqual([500, 'internal']);
    expect(logged).toContain('HttpRequestError');
    expect(logged).not.toContain(TOKEN);
  });
});
