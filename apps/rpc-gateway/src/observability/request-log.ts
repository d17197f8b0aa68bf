import pino, { type Logger } from 'pino';

/** What a request line reports about the answer. */
export interface LoggedAnswer {
  network?: string;
  account?: string;
  calls: number;
}

/** Where batched lines go: one synchronous write per flush (pino's sonic-boom on stdout). */
export interface LineSink {
  write(chunk: string): unknown;
}

/**
 * One info line per HTTP request (request_id, network, account, calls, status, ms), every
 * request, not sampled (ADR 0201). The lines are the same JSON pino writes, but collected and
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
  ) {
    this.logger =
      enabled && base.isLevelEnabled('info')
        ? pino(
            {
              base: base.bindings(),
              level: 'info',
              timestamp: isoTimeCachedPerMs,
            },
            { write: (line: string) => this.add(line) },
          )
        : undefined;
  }

  http(requestId: string, status: number, answer: LoggedAnswer, seconds: number): void {
    this.logger?.info(
      {
        request_id: requestId,
        network: answer.network,
        account: answer.account,
        calls: answer.calls,
        status,
        ms: Math.round(seconds * 1e4) / 10,
      },
      'rpc request',
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
