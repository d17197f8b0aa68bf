import pino from 'pino';
import { RequestLog } from './request-log';

describe('RequestLog', () => {
  const base = pino({ name: 'rpc-gateway', base: { service: 'rpc-gateway' }, level: 'info' });
  const answer = { network: 'eth-mainnet', account: 'acct-1', calls: 2, billedCalls: 1, cu: 20 };

  it('writes one JSON line per request with the request id, batched into one write per turn', async () => {
    const writes: string[] = [];
    const log = new RequestLog(base, true, { write: (chunk) => writes.push(chunk) }, 'eu');
    log.http('req-1', 200, answer, 0.00123);
    log.http('req-2', 429, answer, 0.0005);
    expect(writes).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(1);
    const lines = writes[0]!
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        service: 'rpc-gateway',
        msg: 'rpc request',
        request_id: 'req-1',
        network: 'eth-mainnet',
        account: 'acct-1',
        region: 'eu',
        calls: 2,
        billed_calls: 1,
        cu: 20,
        status: 200,
        ms: 1.2,
      }),
      expect.objectContaining({ request_id: 'req-2', status: 429, ms: 0.5 }),
    ]);
  });

  it('a gRPC call: the same fields, its method and gRPC status code', () => {
    const writes: string[] = [];
    const log = new RequestLog(base, true, { write: (chunk) => writes.push(chunk) }, 'eu');
    log.http('req-h', 429, answer, 0.001);
    log.grpc('req-g', 'bor.BorApi/GetAuthor', 8, answer, 0.001);
    log.flush();
    const [http, grpc] = writes[0]!
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(http).not.toHaveProperty('method');
    const { method, msg, ...shared } = grpc!;
    expect({ method, msg }).toEqual({ method: 'bor.BorApi/GetAuthor', msg: 'rpc grpc call' });
    expect(Object.keys(shared).sort()).toEqual(
      Object.keys(http!)
        .filter((k) => k !== 'msg')
        .sort(),
    );
    expect(shared).toMatchObject({ request_id: 'req-g', status: 8, calls: 2, cu: 20 });
  });

  it('a WebSocket message: the same fields, its connection id for a request id', () => {
    const writes: string[] = [];
    const log = new RequestLog(base, true, { write: (chunk) => writes.push(chunk) }, 'eu');
    log.ws('conn-1', 200, answer, 0.002);
    log.flush();
    expect(JSON.parse(writes[0]!)).toEqual(
      expect.objectContaining({
        msg: 'rpc ws message',
        connection_id: 'conn-1',
        region: 'eu',
        network: 'eth-mainnet',
        account: 'acct-1',
        calls: 2,
        billed_calls: 1,
        cu: 20,
        status: 200,
        ms: 2,
      }),
    );
  });

  it('flush writes what is pending at once (shutdown); nothing when disabled or above info', () => {
    const writes: string[] = [];
    const log = new RequestLog(base, true, { write: (chunk) => writes.push(chunk) });
    log.http('req-3', 200, answer, 0.001);
    log.flush();
    expect(writes).toHaveLength(1);
    const off = new RequestLog(base, false, { write: (chunk) => writes.push(chunk) });
    off.http('req-4', 200, answer, 0.001);
    off.flush();
    const quiet = new RequestLog(pino({ level: 'warn' }), true, { write: (c) => writes.push(c) });
    quiet.http('req-5', 200, answer, 0.001);
    quiet.flush();
    expect(writes).toHaveLength(1);
  });
});
