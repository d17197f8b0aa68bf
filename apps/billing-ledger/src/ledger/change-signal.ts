import { Injectable } from '@nestjs/common';
import type { BalanceRow } from './ledger.repository';

/**
 * Tells the publishers (balance state, outbox) that committed changes wait to go out. A change
 * may carry the committed balance rows (usage does), so the publisher needs no read to publish
 * them; without rows the publisher looks the unpublished ones up in the database.
 */
@Injectable()
export class ChangeSignal {
  private readonly listeners: Array<(rows?: readonly BalanceRow[], urgent?: boolean) => void> = [];

  onChange(listener: (rows?: readonly BalanceRow[], urgent?: boolean) => void): void {
    this.listeners.push(listener);
  }

  /** `urgent`: some row's ok/exhausted state flipped; it must reach the gateways at once. */
  changed(rows?: readonly BalanceRow[], urgent = false): void {
    for (const listener of this.listeners) listener(rows, urgent);
  }
}
