import { dailyWindow } from '@meridian/plans';
import { z } from 'zod';
import {
  accountId,
  count,
  cu,
  idempotencyId,
  isoTimestamp,
  networkKey,
  signedCu,
  tokenString,
} from './common.schema';
import { MAX_PARTITIONS } from '../partitions';
import { Streams } from '../streams';

const window = {
  /** Producer instance (pod name / hostname + pid): ids stay unique across replicas. */
  producerId: tokenString,
  windowStart: isoTimestamp,
  windowEnd: isoTimestamp,
};

function totalMatches(u: { items: { cu: number }[]; totalCu: number }): boolean {
  return u.items.reduce((sum, item) => sum + item.cu, 0) === u.totalCu;
}

/** One account's node calls during one flush window of one rpc-gateway replica. */
export const NodeUsageSchema = z.object({
  id: idempotencyId,
  kind: z.literal('node'),
  accountId,
  ...window,
  items: z
    .array(z.object({ network: networkKey, method: z.string().min(1).max(128), calls: count, cu }))
    .min(1),
  totalCu: cu,
});

/** One account's delivery attempts (25 CU each) during one window of one delivery-worker. */
export const DeliveryUsageSchema = z.object({
  id: idempotencyId,
  kind: z.literal('webhook_delivery'),
  accountId,
  ...window,
  items: z.array(z.object({ webhookId: tokenString, attempts: count, cu })).min(1),
  totalCu: cu,
});

/**
 * `billing.usage.recorded.v1.<account>`: metered CU, one account per message. Superseded by
 * `UsageFlushed` (ADR 0103); billing-ledger still applies it so producers can be upgraded after it. billing-ledger applies each id exactly
 * once (the stream drops repeats within its duplicate window; the ledger keeps applied ids).
 * id = `<producerId>:<accountId>:<windowStart>` (usageId).
 */
export const UsageRecordedSchema = z
  .discriminatedUnion('kind', [NodeUsageSchema, DeliveryUsageSchema])
  .refine(totalMatches, 'totalCu must equal the sum of items[].cu');
export type UsageRecorded = z.infer<typeof UsageRecordedSchema>;
export type NodeUsage = z.infer<typeof NodeUsageSchema>;
export type DeliveryUsage = z.infer<typeof DeliveryUsageSchema>;

export function usageId(producerId: string, account: string, windowStart: string): string {
  return `${producerId}:${account}:${windowStart}`;
}

/**
 * Fleet usage (ADR 0103): one message per producer flush carries every account's usage of that
 * window, so a producer publishes a handful of messages a second however many accounts are busy
 * (the per-account `UsageRecorded` above cost one awaited publish per account per second, and
 * the ledger one journal per message). A flush larger than `USAGE_FLUSH_PART_BYTES` is split
 * into parts; each part is a message of its own with id `<producerId>:<windowStart>:<part>`
 * (usageFlushId), applied exactly once by billing-ledger. Accounts are not split across parts.
 */
export const NodeAccountUsageSchema = NodeUsageSchema.pick({
  kind: true,
  accountId: true,
  items: true,
  totalCu: true,
});
export const DeliveryAccountUsageSchema = DeliveryUsageSchema.pick({
  kind: true,
  accountId: true,
  items: true,
  totalCu: true,
});
export const AccountUsageSchema = z
  .discriminatedUnion('kind', [NodeAccountUsageSchema, DeliveryAccountUsageSchema])
  .refine(totalMatches, 'totalCu must equal the sum of items[].cu');
export type AccountUsage = z.infer<typeof AccountUsageSchema>;
export type NodeAccountUsage = z.infer<typeof NodeAccountUsageSchema>;
export type DeliveryAccountUsage = z.infer<typeof DeliveryAccountUsageSchema>;

/**
 * A part's serialized size stays below this. 64 KiB of compact rows (ADR 0105, ~43 bytes an
 * account-item) is about 1,400 accounts with one method each, as many as a v1 part held in
 * 256 KiB (~1,650 at ~157 bytes): the ledger's bounds are counted in parts
 * (`Consumers.ledgerUsage.concurrency`: parts in flight, so parts per transaction), and they
 * keep their meaning in accounts; a redelivery stays cheap; a 10,000-account flush is 7-20
 * messages; and a part is far below the BILLING stream's `maxMsgSize` (1 MiB, the NATS default
 * max_payload).
 */
export const USAGE_FLUSH_PART_BYTES = 64 * 1024;

/**
 * How long a usage part's id is remembered once applied (billing-ledger's `usage_flushes`, its
 * exactly-once record) and a published part kept by the producer that stored it
 * (delivery-worker's outbox): a day longer than the BILLING stream keeps a message, which is the
 * longest a part can be delivered again. A producer re-sends a part only until the stream has
 * stored it, and the stream drops a repeat within its duplicate window. Without a limit the
 * record grows by every part of the fleet: 64 a second at 10,000 accounts behind 8 producers,
 * 5.5 million rows a day.
 */
export const USAGE_PART_RETENTION_MS = Streams.BILLING.maxAgeMs + 24 * 3_600_000;

const HOUR_MS = 3_600_000;

/**
 * The hour a usage window is reported in (hourly rollups, the usage API): the UTC hour of its
 * start, in one ISO form per hour. A window never spans an hour's start (`nextUsageCut`), so a
 * window's usage belongs to its hour even when a NATS outage held the window open.
 */
export function usageHourOf(windowStart: string | Date): string {
  const ms = typeof windowStart === 'string' ? Date.parse(windowStart) : windowStart.getTime();
  return new Date(Math.floor(ms / HOUR_MS) * HOUR_MS).toISOString();
}

/**
 * The first usage cut after `ms`: the next hour's start or the Free allowance's daily reset
 * (07:30 UTC), whichever comes first. No producer's window spans a cut (`nextUsageWindow` of
 * platform-messaging ends it 1 ms before), so a window's usage lies in one hour (`usageHourOf`)
 * and on one side of every Free account's period start: billing-ledger charges a window that
 * ended by the reset to the day before (ADR 0108), even one a NATS outage held open for up to
 * half an hour. Paid plans' periods start at their own renewal moments, which no fleet-wide cut
 * can follow: a window spanning one is charged whole to the new period.
 */
export function nextUsageCut(ms: number): number {
  const nextHour = Math.floor(ms / HOUR_MS) * HOUR_MS + HOUR_MS;
  return Math.min(nextHour, dailyWindow(new Date(ms)).end.getTime());
}

/**
 * No account twice with the same kind. A set per kind, not one of `${kind}|${accountId}` strings:
 * a part has ~2,000 accounts and billing-ledger validates ~40 parts a second (ADR 0104).
 */
function oncePerKind(f: { accounts: ReadonlyArray<{ kind: string; accountId: string }> }) {
  const seen = new Map<string, Set<string>>();
  for (const { kind, accountId } of f.accounts) {
    let ids = seen.get(kind);
    if (ids === undefined) seen.set(kind, (ids = new Set()));
    if (ids.has(accountId)) return false;
    ids.add(accountId);
  }
  return true;
}

/** The header of a flush part, v1 and v2 alike: which producer, window and part it is. */
const partHeader = {
  id: idempotencyId,
  /** Producer instance (pod name / hostname + pid + start): unique across the fleet. */
  producerId: tokenString,
  windowStart: isoTimestamp,
  windowEnd: isoTimestamp,
  /** 0-based part of this flush, and how many parts it has. */
  part: count,
  parts: z.number().int().min(1),
};
type PartHeader = {
  id: string;
  producerId: string;
  windowStart: string;
  part: number;
  parts: number;
};
const partInRange = (f: PartHeader) => f.part < f.parts;
const idOfPart = (f: PartHeader) => f.id === usageFlushId(f.producerId, f.windowStart, f.part);
const PART_IN_RANGE = 'part must be below parts';
const ID_OF_PART = 'id must be <producerId>:<windowStart>:<part>';

/** `billing.usage.flushed.v1.<producerId>`: one part of one producer's flush. */
export const UsageFlushedSchema = z
  .object({ ...partHeader, accounts: z.array(AccountUsageSchema).min(1) })
  .refine(partInRange, PART_IN_RANGE)
  .refine(idOfPart, ID_OF_PART)
  .refine(oncePerKind, 'an account appears once per kind in a part');
export type UsageFlushed = z.infer<typeof UsageFlushedSchema>;

export function usageFlushId(producerId: string, windowStart: string, part: number): string {
  return `${producerId}:${windowStart}:${part}`;
}

/**
 * A usage line of a compact flush part (v2, ADR 0105): one method of a network, or one webhook's
 * delivery attempts. A part lists each of its lines once; its rows point at them by index.
 */
export const UsageLineSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('node'), network: networkKey, method: z.string().min(1).max(128) }),
  z.object({ kind: z.literal('webhook_delivery'), webhookId: tokenString }),
]);
export type UsageLine = z.infer<typeof UsageLineSchema>;

/** Numbers per row of a compact part's `usage`: account index, line index, calls, CU. */
export const USAGE_ROW = 4;

/**
 * Rows of whole numbers, account by account: the first row is account 0, each next row the same
 * account or the next one, the last the last account (so every account has usage and none is
 * split); every line index in range; the CU summing to `totalCu`. One pass over numbers.
 */
function rowsWellFormed(f: {
  lines: readonly unknown[];
  accounts: readonly unknown[];
  usage: readonly number[];
  totalCu: number;
}): boolean {
  const { usage } = f;
  if (usage.length % USAGE_ROW !== 0) return false;
  let account = 0;
  let total = 0;
  for (let r = 0; r < usage.length; r += USAGE_ROW) {
    const a = usage[r]!;
    if (a !== account && !(a === account + 1 && r > 0)) return false;
    account = a;
    if (usage[r + 1]! >= f.lines.length) return false;
    total += usage[r + 3]!;
  }
  return account === f.accounts.length - 1 && total === f.totalCu;
}

function accountsOnce(f: { accounts: readonly string[] }): boolean {
  return new Set(f.accounts).size === f.accounts.length;
}

/**
 * `billing.usage.flushed.v2.u<usage partition>`: one part of one producer's flush, compact (ADR 0105).
 * The header and id are v1's; the usage is columnar: the part's distinct `lines`, its
 * `accounts`, and `usage`, rows of [account index, line index, calls, CU] flattened, account by
 * account. A v1 account entry of ~157 bytes, two objects and four strings to parse, check and
 * collect is here ~43 bytes: one string and four small integers. `packAccounts` builds it from
 * the meter's account entries; `unpackAccounts` gives them back (parking, tests).
 */
export const UsageFlushedV2Schema = z
  .object({
    ...partHeader,
    /**
     * The usage partition of every account in the part (`usagePartitionOf`, one of the fixed
     * `USAGE_PARTITIONS`; ADR 0107): it routes the part to `u<k>`, which the ledger replica of
     * that partition reads. Absent: 0 (a producer of a release before ADR 0105 step 3, or of one
     * ledger partition then). Routing only: a part applies the same wherever it is applied.
     */
    ledgerPartition: z
      .number()
      .int()
      .min(0)
      .max(MAX_PARTITIONS - 1)
      .optional(),
    lines: z.array(UsageLineSchema).min(1),
    accounts: z.array(accountId).min(1),
    usage: z.array(count).min(USAGE_ROW),
    /** CU of every row: a check the producer's encoding kept every number. */
    totalCu: cu,
  })
  .refine(partInRange, PART_IN_RANGE)
  .refine(idOfPart, ID_OF_PART)
  .refine(
    rowsWellFormed,
    'usage must be rows of [account, line, calls, cu], account by account, every index in range, cu summing to totalCu',
  )
  .refine(accountsOnce, 'an account appears once in a part');
export type UsageFlushedV2 = z.infer<typeof UsageFlushedV2Schema>;

/** What `packAccounts` builds: a compact part without its header. */
export type PackedUsage = Pick<UsageFlushedV2, 'lines' | 'accounts' | 'usage' | 'totalCu'>;

const utf8 = new TextEncoder();

const lineKey = (line: UsageLine) =>
  line.kind === 'node' ? `n\u0000${line.network}\u0000${line.method}` : `w\u0000${line.webhookId}`;

/**
 * Builds a compact part's usage from account entries, and measures it as it grows: `bytesOf`
 * is what adding an entry adds to the serialized part, at most, so a producer can cut parts
 * below a size without serializing them. An account's entries (its node and webhook usage) share
 * its index, its rows kept together.
 */
export class UsagePacker {
  private readonly lines: UsageLine[] = [];
  private readonly lineIndex = new Map<string, number>();
  private readonly accounts: string[] = [];
  private readonly accountIndex = new Map<string, number>();
  /** Per account: its rows without the account index, [line, calls, cu] flattened. */
  private readonly rows: number[][] = [];
  private totalCu = 0;
  /** Serialized size of what was added so far, at most (the header not included). */
  bytes = 0;

  /** Accounts added. */
  get size(): number {
    return this.accounts.length;
  }

  bytesOf(entry: AccountUsage): number {
    let account = this.accountIndex.get(entry.accountId);
    // A new id (a token: no escapes) quoted, and a comma.
    let bytes = account === undefined ? entry.accountId.length + 3 : 0;
    account ??= this.accounts.length;
    const added = new Map<string, number>();
    for (const [i, line] of linesOf(entry).entries()) {
      const key = lineKey(line);
      let index = this.lineIndex.get(key) ?? added.get(key);
      if (index === undefined) {
        index = this.lines.length + added.size;
        added.set(key, index);
        bytes += utf8.encode(JSON.stringify(line)).length + 1;
      }
      const { calls, cu } = amountsOf(entry, i);
      // Four numbers, each followed by a comma.
      bytes += digits(account) + digits(index) + digits(calls) + digits(cu) + USAGE_ROW;
    }
    return bytes;
  }

  /** Adds an entry; `bytes`: its `bytesOf`, when the caller measured it already. */
  add(entry: AccountUsage, bytes = this.bytesOf(entry)): void {
    this.bytes += bytes;
    let account = this.accountIndex.get(entry.accountId);
    if (account === undefined) {
      account = this.accounts.length;
      this.accounts.push(entry.accountId);
      this.accountIndex.set(entry.accountId, account);
      this.rows.push([]);
    }
    const rows = this.rows[account]!;
    for (const [i, line] of linesOf(entry).entries()) {
      const key = lineKey(line);
      let index = this.lineIndex.get(key);
      if (index === undefined) {
        index = this.lines.length;
        this.lines.push(line);
        this.lineIndex.set(key, index);
      }
      const { calls, cu } = amountsOf(entry, i);
      rows.push(index, calls, cu);
      this.totalCu += cu;
    }
  }

  result(): PackedUsage {
    const usage: number[] = [];
    for (const [account, rows] of this.rows.entries())
      for (let r = 0; r < rows.length; r += 3)
        usage.push(account, rows[r]!, rows[r + 1]!, rows[r + 2]!);
    return { lines: this.lines, accounts: this.accounts, usage, totalCu: this.totalCu };
  }
}

function linesOf(entry: AccountUsage): UsageLine[] {
  return entry.kind === 'node'
    ? entry.items.map(({ network, method }) => ({ kind: 'node', network, method }))
    : entry.items.map(({ webhookId }) => ({ kind: 'webhook_delivery', webhookId }));
}

function amountsOf(entry: AccountUsage, i: number): { calls: number; cu: number } {
  if (entry.kind === 'node') {
    const { calls, cu } = entry.items[i]!;
    return { calls, cu };
  }
  const { attempts, cu } = entry.items[i]!;
  return { calls: attempts, cu };
}

/** Decimal digits of a whole number. */
function digits(n: number): number {
  let d = 1;
  for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) d += 1;
  return d;
}

/** A compact part's usage from account entries (see UsagePacker). */
export function packAccounts(entries: readonly AccountUsage[]): PackedUsage {
  const packer = new UsagePacker();
  for (const entry of entries) packer.add(entry);
  return packer.result();
}

/** A v1 part as the compact part it stands for (a consumer's one code path for both). */
export function compactFlush(flush: UsageFlushed): UsageFlushedV2 {
  const { id, producerId, windowStart, windowEnd, part, parts } = flush;
  return { id, producerId, windowStart, windowEnd, part, parts, ...packAccounts(flush.accounts) };
}

/**
 * A compact part as the v1 part it stands for: the same header and id, its rows as v1's account
 * entries. What a producer publishes while `USAGE_FLUSH_VERSION` is 1 (an upgrade whose ledger
 * does not take compact parts yet, ADR 0105); such parts are cut smaller (`usagePartBytes` of
 * platform-messaging) to stay below the stream's 1 MiB as v1.
 */
export function expandFlush(part: UsageFlushedV2): UsageFlushed {
  const { id, producerId, windowStart, windowEnd, part: index, parts } = part;
  return {
    id,
    producerId,
    windowStart,
    windowEnd,
    part: index,
    parts,
    accounts: unpackAccounts(part),
  };
}

/** The flush contract versions a producer can publish (`USAGE_FLUSH_VERSION`). */
export type UsageFlushVersion = 1 | 2;

/**
 * A producer's `USAGE_FLUSH_VERSION` setting (rpc-gateway, delivery-worker): `2` (default,
 * compact), or `1` while billing-ledger is upgraded from a release before ADR 0105.
 */
export const usageFlushVersionSetting = z
  .enum(['1', '2'])
  .default('2')
  .transform((value): UsageFlushVersion => (value === '1' ? 1 : 2));

/**
 * The account entries of a compact part, as v1 wrote them: per account, its node lines as one
 * entry and its webhook lines as another, items in row order.
 */
export function unpackAccounts(part: PackedUsage): AccountUsage[] {
  const entries: AccountUsage[] = [];
  let node: NodeAccountUsage | undefined;
  let webhook: DeliveryAccountUsage | undefined;
  let account = -1;
  const close = () => {
    if (node) entries.push(node);
    if (webhook) entries.push(webhook);
    node = undefined;
    webhook = undefined;
  };
  for (let r = 0; r < part.usage.length; r += USAGE_ROW) {
    const a = part.usage[r]!;
    if (a !== account) {
      close();
      account = a;
    }
    const accountId = part.accounts[a]!;
    const line = part.lines[part.usage[r + 1]!]!;
    const calls = part.usage[r + 2]!;
    const cu = part.usage[r + 3]!;
    if (line.kind === 'node') {
      node ??= { kind: 'node', accountId, items: [], totalCu: 0 };
      node.items.push({ network: line.network, method: line.method, calls, cu });
      node.totalCu += cu;
    } else {
      webhook ??= { kind: 'webhook_delivery', accountId, items: [], totalCu: 0 };
      webhook.items.push({ webhookId: line.webhookId, attempts: calls, cu });
      webhook.totalCu += cu;
    }
  }
  close();
  return entries;
}

export const AccountTypeSchema = z.enum(['individual', 'team']);
export const BalanceStatusSchema = z.enum(['ok', 'exhausted']);
export type BalanceStatus = z.infer<typeof BalanceStatusSchema>;

/** Limits of the account's plan (or contract), already resolved by billing-ledger. */
export const PlanCapsSchema = z.object({
  nodeRps: count,
  accessTokens: count,
  webhooks: z.object({
    activeWebhooks: count,
    addressesPerWebhook: count,
    addressesPerAccount: count,
    eventsPerSecond: count,
    eventsBurst: count,
    inlineAddresses: count,
    listRefs: count,
    addressLists: count,
    addressesPerList: count,
  }),
  audit: z.object({
    /** Audit checks per period; 0 = no audit access. */
    checksPerPeriod: count,
    requestsPerSecond: count,
  }),
});
export type PlanCaps = z.infer<typeof PlanCapsSchema>;

/**
 * `billing.balance.changed.v1.<account>` and the value of the billing-balance-state KV bucket
 * (key: account id). `version` increases with every change of the account; a reader keeps the
 * highest version it has seen (events and KV may arrive in either order).
 * id = `<accountId>:balance:<version>` (balanceChangedId).
 */
export const BalanceStateChangedSchema = z
  .object({
    id: idempotencyId,
    accountId,
    version: z.number().int().min(1),
    state: BalanceStatusSchema,
    /** When the balance reached zero; null while ok. */
    exhaustedSince: isoTimestamp.nullable(),
    allowanceCu: signedCu,
    purchasedCu: signedCu,
    pendingTopUpCu: cu,
    allowanceResetsAt: isoTimestamp.nullable(),
    /** null: team account without a plan. */
    planId: tokenString.nullable(),
    accountType: AccountTypeSchema,
    nodeOwner: z.boolean(),
    caps: PlanCapsSchema,
    at: isoTimestamp,
  })
  .refine(
    (s) => (s.state === 'exhausted') === (s.exhaustedSince !== null),
    'exhaustedSince is set exactly when state is exhausted',
  );
export type BalanceStateChanged = z.infer<typeof BalanceStateChangedSchema>;

export function balanceChangedId(account: string, version: number): string {
  return `${account}:balance:${version}`;
}

/**
 * `billing.plan.changed.v1.<account>`: webhook-matcher pauses (downgrade) or resumes (upgrade)
 * webhooks newest first. id = `<accountId>:plan:<version>` (planChangedId); the version is the
 * account version shared with balance changes.
 */
export const PlanChangedSchema = z.object({
  id: idempotencyId,
  accountId,
  version: z.number().int().min(1),
  oldPlanId: tokenString.nullable(),
  newPlanId: tokenString.nullable(),
  caps: PlanCapsSchema,
  at: isoTimestamp,
});
export type PlanChanged = z.infer<typeof PlanChangedSchema>;

export function planChangedId(account: string, version: number): string {
  return `${account}:plan:${version}`;
}

export const CredentialTypeSchema = z.enum(['access_token', 'api_key']);
export type CredentialType = z.infer<typeof CredentialTypeSchema>;

/**
 * `billing.credential.revoked.v1.<account>` and the value of the billing-revoked-credentials KV
 * bucket (key: revokedCredentialKey(type, hash)). Caches evict the credential on sight.
 * id = `<credentialId>:revoked` (credentialRevokedId): a credential is revoked once.
 */
export const CredentialRevokedSchema = z.object({
  id: idempotencyId,
  accountId,
  credentialType: CredentialTypeSchema,
  credentialId: tokenString,
  /** sha256 of the secret, lower-case hex: what caches are keyed by. Never the secret. */
  credentialHash: z.string().regex(/^[0-9a-f]{64}$/, 'sha256 lower-case hex'),
  /** Network of an access token; absent for API keys. */
  network: networkKey.optional(),
  reason: z.enum(['rolled', 'deleted', 'revoked']),
  at: isoTimestamp,
});
export type CredentialRevoked = z.infer<typeof CredentialRevokedSchema>;

export function credentialRevokedId(credentialId: string): string {
  return `${credentialId}:revoked`;
}

/** `billing.topup.cleared.v1.<account>`: purchased CU became spendable. id = `<topUpId>:cleared`. */
export const TopUpClearedSchema = z.object({
  id: idempotencyId,
  accountId,
  topUpId: tokenString,
  cu,
  /** Purchased CU after the top-up was added. */
  purchasedCuAfter: signedCu,
  clearedAt: isoTimestamp,
});
export type TopUpCleared = z.infer<typeof TopUpClearedSchema>;

export function topUpClearedId(topUpId: string): string {
  return `${topUpId}:cleared`;
}
