import pino, { type Logger } from 'pino';

/**
 * What a request line reports about the answer: `calls`, the calls the request held as parsed
 * (a JSON-RPC body: `callsAsParsed`; a gRPC method: the JSON-RPC calls it asked for), whatever their
 * fate; `billedCalls` and `cu`, what was metered (README "Request log").
 */
export interface LoggedAnswer {
  network?: string;
  account?: string;
  calls: number;
  billedCalls: number;
  cu: number;
}

/** Where batched lines go: one synchronous write per flush (pino's sonic-boom on stdout). */
export interface LineSink {
  write(chunk: string): unknown;
}

/**
 * One info line per HTTP request, WebSocket message and gRPC call (request_id — a WebSocket
 * message: connection_id —, region, network, account, calls, billed_calls, cu, status, ms; gRPC
 * adds the method and its status code), every one, not sampled (ADR 0201): the one shape of a
 * request line, built in `line`. The lines are the same JSON pino writes, but collected and
 * written once per event-loop turn (or per 64 KiB) instead of one write(2) per request, so a
 * busy replica makes a few hundred log syscalls a second instead of thousands. Writes stay
 * synchronous on the JS thread, so they never interleave with the app logger's lines; `flush`
 * runs at shutdown.
 */
export class RequestLog {
  readonly logger: Logger | undefined;
  private pending: string[] = [];
  private pendingBytes = 0;
  private scheduled = false;

  constructor(
    base: Logger,
    enabled: boolean,
    private readonly sink: LineSink = pino.destination({ dest: 1, sync: true }),
    region?: string,
  ) {
    // pino's bindings() is a new object each call: the region joins it on every line.
    const bindings: Record<string, unknown> = base.bindings();
    if (region !== undefined) bindings['region'] = region;
    this.logger =
      enabled && base.isLevelEnabled('info')
        ? pino(
            {
              base: bindings,
              level: 'info',
              timestamp: isoTimeCachedPerMs,
            },
            { write: (line: string) => this.add(line) },
          )
        : undefined;
  }

  /** Whether lines are written: callers skip the work a line alone needs when not. */
  get enabled(): boolean {
    return this.logger !== undefined;
  }

  /** An HTTP request: `status` its HTTP status. */
  http(requestId: string, status: number, answer: LoggedAnswer, seconds: number): void {
    this.line('rpc request', 'request_id', requestId, undefined, status, answer, seconds);
  }

  /** A WebSocket message: no request id, its connection's; `status` as HTTP would answer it. */
  ws(connectionId: string, status: number, answer: LoggedAnswer, seconds: number): void {
    this.line('rpc ws message', 'connection_id', connectionId, undefined, status, answer, seconds);
  }

  /** A gRPC call: `method` as `bor.BorApi/GetAuthor`, `status` its gRPC status code. */
  grpc(
    requestId: string,
    method: string,
    status: number,
    answer: LoggedAnswer,
    seconds: number,
  ): void {
    this.line('rpc grpc call', 'request_id', requestId, method, status, answer, seconds);
  }

  private line(
    msg: string,
    idKey: 'request_id' | 'connection_id',
    id: string,
    method: string | undefined,
    status: number,
    answer: LoggedAnswer,
    seconds: number,
  ): void {
    this.logger?.info(
      {
        [idKey]: id,
        method,
        network: answer.network,
        account: answer.account,
        calls: answer.calls,
        billed_calls: answer.billedCalls,
        cu: answer.cu,
        status,
        ms: Math.round(seconds * 1e4) / 10,
      },
      msg,
    );
  }

  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const chunk = this.pending.join('');
    this.pending = [];
    this.pendingBytes = 0;
    this.sink.write(chunk);
  }

  private add(line: string): void {
    this.pending.push(line);
    this.pendingBytes += line.length;
    if (this.pendingBytes >= 65_536) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }
}

let lastMs = 0;
let lastTime = '';

/**
 * pino's `isoTime`, formatted once per millisecond: a busy replica writes many lines per
 * millisecond, and formatting the date was the largest single item of a request line's cost.
 */
function isoTimeCachedPerMs(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastTime = `,"time":"${new Date(ms).toISOString()}"`;
  }
  return lastTime;
}
