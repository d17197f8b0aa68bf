import { Injectable } from '@nestjs/common';
import type { BalanceRow } from './ledger.repository';

/**
 * Tells the publishers (balance state, outbox) that committed changes wait to go out. A change
 * may carry the committed balance rows (usage does), so the publisher needs no read to publish
 * them; without rows the publisher looks the unpublished ones up in the database.
 */
type Listener = (rows: readonly BalanceRow[] | undefined, flipped: ReadonlySet<string>) => void;
const NONE: ReadonlySet<string> = new Set();

@Injectable()
export class ChangeSignal {
  private readonly listeners: Array<Listener> = [];

  onChange(listener: Listener): void {
    this.listeners.push(listener);
  }

  /**
   * `flipped`: the accounts among `rows` whose ok/exhausted state flipped: they must reach the
   * gateways at once, and their facts changed (an event, besides the KV state).
   */
  changed(rows?: readonly BalanceRow[], flipped: ReadonlySet<string> = NONE): void {
    for (const listener of this.listeners) listener(rows, flipped);
  }
}
