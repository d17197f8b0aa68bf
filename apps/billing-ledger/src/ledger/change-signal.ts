import { Injectable } from '@nestjs/common';
import type { BalanceRow } from './ledger.repository';

/**
 * Tells the publishers (balance state, outbox) that committed changes wait to go out. A change
 * may carry the committed balance rows (usage does), so the publisher needs no read to publish
 * them; without rows the publisher looks the unpublished ones up in the database.
 */
@Injectable()
export class ChangeSignal {
  private readonly listeners: Array<(rows?: readonly BalanceRow[]) => void> = [];

  onChange(listener: (rows?: readonly BalanceRow[]) => void): void {
    this.listeners.push(listener);
  }

  changed(rows?: readonly BalanceRow[]): void {
    for (const listener of this.listeners) listener(rows);
  }
}
