/**
 * NATS_PREFIX applied in one place to every subject, stream, consumer and KV bucket name, so
 * several deployments (or every integration test) share one NATS server without seeing each
 * other. Subjects get `<prefix>.`; names (streams, durables, buckets: no dots allowed) get
 * `<prefix>_`. An empty prefix leaves everything as declared in @meridian/contracts.
 */
export class NatsNamespace {
  constructor(readonly prefix: string) {
    if (!/^[A-Za-z0-9_-]*$/.test(prefix)) {
      throw new Error(
        `invalid NATS_PREFIX ${JSON.stringify(prefix)}: letters, digits, _ and - only`,
      );
    }
  }

  subject(subject: string): string {
    return this.prefix ? `${this.prefix}.${subject}` : subject;
  }

  /** The declared (unprefixed) subject of a received message. */
  unprefixSubject(subject: string): string {
    if (!this.prefix) return subject;
    const head = `${this.prefix}.`;
    if (!subject.startsWith(head))
      throw new Error(`subject ${subject} is outside namespace ${this.prefix}`);
    return subject.slice(head.length);
  }

  stream(name: string): string {
    return this.name(name);
  }

  consumer(durable: string): string {
    return this.name(durable);
  }

  bucket(name: string): string {
    return this.name(name);
  }

  private name(name: string): string {
    return this.prefix ? `${this.prefix}_${name}` : name;
  }
}
