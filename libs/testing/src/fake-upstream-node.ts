import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/** One JSON-RPC call as a fake node reads it. */
export interface FakeNodeCall {
  id?: unknown;
  method: string;
  params?: unknown[];
}

/** A JSON-RPC body: one call or a batch. */
export type FakeNodeBody = FakeNodeCall | FakeNodeCall[];

/** How a fake upstream node treats a request. */
export type FakeNodeBehaviour =
  /** Relayed to the real node behind it, its answer passed back as it is. */
  | 'relay'
  /** Never answered; the connection stays open (a hung node). */
  | 'hang'
  /** The connection closed unanswered (a node dying mid-exchange). */
  | 'drop'
  /** HTTP 502 with an HTML page (a load balancer in front of a dead node). */
  | 'html_502'
  /** HTTP 429 with a JSON-RPC -32005 body (a provider's rate limit). */
  | 'throttled'
  /** The real node's answer under another id (999). */
  | 'wrong_id'
  /**
   * Refused unread: one error object under id null, whatever was sent (anvil's answer to params
   * nested past 128 levels; -32600 "recursion limit exceeded").
   */
  | 'refuse'
  /** A batch refused so, whole; a single call relayed. */
  | 'refuse_batch'
  /**
   * A node `behindBy` blocks behind the real one: its eth_blockNumber is the real head minus
   * that, and it has none of the blocks asked by number (null: in tests, the newest).
   */
  | { behindBy: number }
  /**
   * Every call answered with a result string of `resultBytes` characters ('x'), written in
   * 1 MiB chunks as the socket takes them (no body of that size is built): an answer too large
   * for the gateway to keep, from a node that cannot run here (anvil's largest answers take a
   * chain of that size). `cutShort` counts the answers whose connection closed before the end.
   * `thenStall`: after the result's characters nothing more is written and the connection stays
   * open, so only a reader that stops at its own limit ever has an answer to give.
   */
  | { resultBytes: number; thenStall?: boolean };

const MIB = 1024 * 1024;
const MIB_OF_X = Buffer.alloc(MIB, 'x');

/** The error body of `refuse`: a call's error under id null. */
export const REFUSED_UNREAD = {
  jsonrpc: '2.0',
  id: null,
  error: { code: -32600, message: 'recursion limit exceeded' },
} as const;

/** A health check of the gateway and indexer: eth_blockNumber and nothing else. */
export const isHealthCheck = (body: FakeNodeBody): boolean =>
  (Array.isArray(body) ? body : [body]).every((c) => c.method === 'eth_blockNumber');

export interface FakeUpstreamNode {
  readonly url: string;
  /** How its health checks (`isHealthCheck`) are treated. */
  health: FakeNodeBehaviour;
  /** How every other request is treated. */
  calls: FakeNodeBehaviour;
  /** Every body received, health checks included, in order of arrival. */
  bodies: FakeNodeBody[];
  /** Calls received (a batch counts its calls), health checks left out. */
  received: number;
  /** Answers of `{ resultBytes }` whose connection closed before they were written whole. */
  cutShort: number;
  /** Resolves once every `{ resultBytes }` answer begun so far is over (written or cut short). */
  largeAnswersOver(): Promise<void>;
  /**
   * Runs on each body as it arrives, before it is treated: a test changes the node's behaviour
   * at the moment a request reaches it (e.g. `calls = 'drop'` on the first batch).
   */
  onRequest?: (body: FakeNodeBody, node: FakeUpstreamNode) => void;
  /** Relays everything again and forgets what was received. */
  reset(): void;
  close(): Promise<void>;
}

/**
 * A fake upstream EVM node: an HTTP JSON-RPC endpoint in front of a real node (anvil) that
 * relays to it or misbehaves as the test scripts it. The shapes of node trouble the gateway must
 * survive (a hung or dying node, a 502 page, a 429, an answer under the wrong id, a node behind,
 * a refusal under id null) come from nodes and providers that cannot run here, and anvil cannot
 * be made to answer in them; this fake stands in for them. Not a node: every answer it gives
 * that is not trouble is anvil's.
 */
export async function startFakeUpstreamNode(realNodeUrl: string): Promise<FakeUpstreamNode> {
  const relay = async (text: string, behaviour: FakeNodeBehaviour, calls: FakeNodeCall[]) => {
    const answer = await fetch(realNodeUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: text,
    });
    if (behaviour === 'relay') return answer.text();
    type Answer = { id: unknown; result?: unknown };
    const parsed = (await answer.json()) as Answer | Answer[];
    const fix = (a: Answer, call: FakeNodeCall | undefined) => {
      if (behaviour === 'wrong_id') a.id = 999;
      const behind = typeof behaviour === 'object' && 'behindBy' in behaviour;
      if (behind && call?.method === 'eth_blockNumber')
        a.result = `0x${Math.max(0, Number(a.result) - behaviour.behindBy).toString(16)}`;
      if (behind && call?.method === 'eth_getBlockByNumber') a.result = null;
      return a;
    };
    return JSON.stringify(
      Array.isArray(parsed) ? parsed.map((a, i) => fix(a, calls[i])) : fix(parsed, calls[0]),
    );
  };

  const answer = (text: string, res: ServerResponse, req: IncomingMessage) => {
    const body = JSON.parse(text) as FakeNodeBody;
    const calls = Array.isArray(body) ? body : [body];
    node.bodies.push(body);
    const health = isHealthCheck(body);
    if (!health) node.received += calls.length;
    node.onRequest?.(body, node);
    const behaviour = health ? node.health : node.calls;
    const send = (status: number, contentType: string, out: string) => {
      res.writeHead(status, { 'content-type': contentType });
      res.end(out);
    };
    if (behaviour === 'hang') return;
    if (behaviour === 'drop') return req.socket.destroy();
    if (behaviour === 'html_502')
      return send(502, 'text/html', '<html><body>502 Bad Gateway</body></html>');
    if (behaviour === 'throttled') {
      const error = { code: -32005, message: 'rate limit exceeded' };
      return send(
        429,
        'application/json',
        JSON.stringify({ jsonrpc: '2.0', id: calls[0]!.id, error }),
      );
    }
    if (typeof behaviour === 'object' && 'resultBytes' in behaviour)
      return sendLarge(res, body, behaviour.resultBytes, behaviour.thenStall === true);
    if (behaviour === 'refuse' || (behaviour === 'refuse_batch' && Array.isArray(body)))
      return send(200, 'application/json', JSON.stringify(REFUSED_UNREAD));
    relay(text, behaviour, calls).then(
      (out) => send(200, 'application/json', out),
      () => res.destroy(),
    );
  };

  const largeAnswers: Promise<void>[] = [];
  const sendLarge = (
    res: ServerResponse,
    body: FakeNodeBody,
    resultBytes: number,
    thenStall: boolean,
  ) => {
    const calls = Array.isArray(body) ? body : [body];
    const parts: (string | number)[] = [Array.isArray(body) ? '[' : ''];
    calls.forEach((call, i) => {
      parts.push(`${i > 0 ? ',' : ''}{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":"`);
      parts.push(resultBytes);
      parts.push('"}');
    });
    parts.push(Array.isArray(body) ? ']' : '');
    // Stalled: the first result's characters are the last thing written.
    if (thenStall) parts.length = parts.indexOf(resultBytes) + 1;
    let finished = false;
    largeAnswers.push(
      new Promise<void>((resolve) =>
        res.on('close', () => {
          if (!finished) node.cutShort++;
          resolve();
        }),
      ),
    );
    res.writeHead(200, { 'content-type': 'application/json' });
    let part = 0;
    let left = -1;
    const write = (): void => {
      while (part < parts.length && !res.destroyed) {
        const next = parts[part]!;
        if (typeof next === 'string') {
          part++;
          if (!res.write(next)) return void res.once('drain', write);
          continue;
        }
        if (left < 0) left = next;
        const size = Math.min(left, MIB);
        left -= size;
        if (left === 0) {
          part++;
          left = -1;
        }
        if (!res.write(size === MIB ? MIB_OF_X : MIB_OF_X.subarray(0, size)))
          return void res.once('drain', write);
      }
      if (part === parts.length && !res.destroyed && !thenStall) {
        finished = true;
        res.end();
      }
    };
    write();
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => answer(Buffer.concat(chunks).toString('utf8'), res, req));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const node: FakeUpstreamNode = {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    health: 'relay',
    calls: 'relay',
    bodies: [],
    received: 0,
    cutShort: 0,
    largeAnswersOver: async () => {
      await Promise.all(largeAnswers);
    },
    reset() {
      Object.assign(node, {
        health: 'relay',
        calls: 'relay',
        bodies: [],
        received: 0,
        cutShort: 0,
      });
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  return node;
}
