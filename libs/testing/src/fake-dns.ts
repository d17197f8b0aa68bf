import { createSocket, type Socket } from 'node:dgram';
import { isIP } from 'node:net';
import * as packet from 'dns-packet';

/**
 * A fake DNS server (named so): the internet's DNS cannot be reached from tests, and this
 * machine's /etc/hosts names only loopback. It answers A and AAAA questions for the names of its
 * table (over UDP, on 127.0.0.1) and NXDOMAIN for every other name, so a test can point a
 * resolver at it (delivery-worker's DELIVERY_DNS_SERVERS) and make a name resolve to a private
 * address. `set` changes an answer, as a rebinding DNS would between two lookups.
 */
export class FakeDns {
  private socket: Socket | undefined;
  /** Every question asked, `<type> <name>`, in order. */
  readonly questions: string[] = [];
  private readonly table = new Map<string, string[]>();

  constructor(table: Record<string, readonly string[]> = {}) {
    for (const [name, addresses] of Object.entries(table)) this.set(name, addresses);
  }

  set(name: string, addresses: readonly string[]): void {
    this.table.set(name.toLowerCase(), [...addresses]);
  }

  /** Starts listening; resolves to `127.0.0.1:<port>`, the form resolvers take. */
  async start(): Promise<string> {
    const socket = createSocket('udp4');
    socket.on('message', (message, peer) => {
      let query: packet.Packet;
      try {
        query = packet.decode(message);
      } catch {
        return; // not DNS: a real server drops it too
      }
      const answer = this.answer(query);
      socket.send(packet.encode(answer), peer.port, peer.address);
    });
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    this.socket = socket;
    return `127.0.0.1:${socket.address().port}`;
  }

  private answer(query: packet.Packet): packet.Packet {
    const question = query.questions?.[0];
    const reply: packet.Packet = {
      id: query.id ?? 0,
      type: 'response',
      flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE | packet.AUTHORITATIVE_ANSWER,
      questions: query.questions ?? [],
      answers: [],
    };
    if (question === undefined) return reply;
    this.questions.push(`${question.type} ${question.name}`);
    const addresses = this.table.get(question.name.toLowerCase());
    if (addresses === undefined) return { ...reply, flags: (reply.flags ?? 0) | NXDOMAIN };
    const family = question.type === 'A' ? 4 : question.type === 'AAAA' ? 6 : 0;
    reply.answers = addresses
      .filter((address) => isIP(address) === family)
      .map((data) => ({
        type: family === 4 ? ('A' as const) : ('AAAA' as const),
        name: question.name,
        ttl: 0,
        data,
      }));
    return reply;
  }

  async stop(): Promise<void> {
    const socket = this.socket;
    this.socket = undefined;
    if (socket) await new Promise<void>((resolve) => socket.close(() => resolve()));
  }
}

/** RCODE 3: the name does not exist. */
const NXDOMAIN = 3;
