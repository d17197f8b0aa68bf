import type { UsageFlushedV2 } from '@meridian/contracts';
import type { BalanceRow } from '../ledger/ledger.repository';
import type { FlushDelivery } from '../ledger/ledger.service';
import { flushPart } from '../usage/flush-aggregate';

/** A Starter account's balance row at version 1, with `overrides`. */
export function balanceRow(overrides: Partial<BalanceRow> = {}): BalanceRow {
  return {
    accountId: 'acc_1',
    allowance: 1_000,
    purchased: 0,
    pending: 0,
    allowanceTotal: 1_000,
    prior: null,
    chainSpent: 0,
    periodStart: null,
    periodEnd: null,
    exhaustedSince: null,
    version: 1,
    planId: 'starter',
    contract: null,
    planStartedAt: new Date('2026-01-01T00:00:00.000Z'),
    renewalAnchor: new Date('2026-01-01T00:00:00.000Z'),
    leftPaid: null,
    accountType: 'individual',
    nodeOwner: false,
    name: 'a',
    createdAt: new Date('2026-01-01T00:00:00.000Z'),
    ...overrides,
  };
}

/** A flush part as the usage consumer hands it to `LedgerService.applyFlushes` (first delivery). */
export function flushDelivery(flush: UsageFlushedV2): FlushDelivery {
  return { part: flushPart(flush), streamSequence: 1, deliveryCount: 1 };
}
