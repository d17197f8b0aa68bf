import { subjectToken } from './subject-token';

/**
 * Every JetStream subject of the system, unprefixed: `<context>.<entity>.<event>.v<major>`,
 * followed by the variable token consumers filter on (network key or account id). The
 * messaging layer (@meridian/platform-messaging) prepends NATS_PREFIX in one place; apps never
 * write a subject string themselves.
 *
 * The variable token comes last so that one wildcard (`…v1.*`) selects an event family and one
 * literal selects a network or account. A major version bump is a new subject (…v2.*) that runs
 * next to v1 until every consumer has moved.
 */
const WILDCARD = '*';

function family(base: string) {
  return {
    /** Subject of one message; `token` is the network key or account id. */
    of: (token: string): string => `${base}.${subjectToken(token)}`,
    /** Every message of the family (all networks / accounts). */
    all: `${base}.${WILDCARD}`,
    base,
  } as const;
}

export const Subjects = {
  chain: {
    /** A canonical block of one network, with transactions, receipts and logs. Token: network key. */
    block: family('chain.block.canonical.v1'),
    /** Blocks removed by a reorganisation. Token: network key. */
    removed: family('chain.block.removed.v1'),
    /** Blocks and removals together, in publication order (one filter keeps their order). */
    blockEvents: 'chain.block.*.v1.*',
  },
  webhook: {
    /**
     * One delivery job (event × phase) for delivery-worker. Token: `r<route>`, the worker
     * partition of the target's host (deliveryRouteToken; ADR 0432).
     */
    deliveryJob: family('webhook.delivery.requested.v1'),
    /** Outcome of one delivery attempt, for webhook-matcher (auto-pause, stats). Token: account id. */
    deliveryHealth: family('webhook.delivery.attempted.v1'),
  },
  billing: {
    /** Metered CU (node calls from rpc-gateway, delivery attempts from delivery-worker). Token: account id. */
    usage: family('billing.usage.recorded.v1'),
    /** One part of a producer's usage flush, every account of the window (ADR 0103). Token: producer id. */
    usageFlushed: family('billing.usage.flushed.v1'),
    /**
     * The same, compact (ADR 0105): what producers publish. Token: `u<k>`, the part's usage
     * partition (`ledgerPartitionToken`, ADR 0107), each read by the ledger replica of it.
     */
    usageFlushedV2: family('billing.usage.flushed.v2'),
    /** The per-account events and v1 parts, for the replica that reads them beside its partition. */
    usageV1: 'billing.usage.*.v1.*',
    /** Every usage family and version (the ledger's one filter while producers upgrade). */
    usageAll: 'billing.usage.>',
    /** New balance state of an account (ok/exhausted, remaining CU, plan caps). Token: account id. */
    balanceChanged: family('billing.balance.changed.v1'),
    /** Plan of an account changed. Token: account id. */
    planChanged: family('billing.plan.changed.v1'),
    /** Balance and plan changes together, in publication order. */
    accountChanges: 'billing.*.changed.v1.*',
    /** An access token or API key stopped working (rolled, deleted, revoked). Token: account id. */
    credentialRevoked: family('billing.credential.revoked.v1'),
    /** A top-up cleared and its CU are spendable. Token: account id. */
    topUpCleared: family('billing.topup.cleared.v1'),
  },
  /** Core NATS request/reply between replicas: in no stream (nothing is stored). */
  control: {
    /**
     * billing-ledger replica i answers here while it runs; the other replicas stand in for it
     * when it stops answering (ADR 0105 step 3). Token: `u<i>` (`ledgerPartitionToken`).
     */
    ledgerPartitionAlive: family('control.ledger.partition.v1'),
  },
} as const;

/** Streams (contexts) that own a dead-letter subject. */
export type DeadLetterContext = 'chain' | 'webhook' | 'billing';

/**
 * Dead-letter subject of one durable consumer: `<context>.message.dead-lettered.v1.<durable>`.
 * It lives in the same stream as the consumer's input (the stream's `<context>.>` subjects),
 * so a dead letter is kept as long as the messages it came from and can be replayed from there.
 */
export const DeadLetterSubjects = {
  of: (context: DeadLetterContext, durable: string): string =>
    `${context}.message.dead-lettered.v1.${subjectToken(durable, 'consumer name')}`,
  all: (context: DeadLetterContext): string => `${context}.message.dead-lettered.v1.*`,
} as const;

/** Whether a NATS subject matches a filter (`*` one token, `>` the rest, as the server does). */
export function subjectMatches(subject: string, filter: string): boolean {
  const tokens = subject.split('.');
  const wanted = filter.split('.');
  for (let i = 0; i < wanted.length; i++) {
    if (wanted[i] === '>') return tokens.length > i;
    if (i >= tokens.length || (wanted[i] !== '*' && wanted[i] !== tokens[i])) return false;
  }
  return tokens.length === wanted.length;
}

/**
 * The subject token `u<i>`: of usage partition i's parts (ADR 0107), and of ledger replica i's
 * liveness answer (ADR 0105 step 3).
 */
export function ledgerPartitionToken(partition: number): string {
  return `u${partition}`;
}

/** The subject token of a delivery route (a delivery-worker partition). */
export function deliveryRouteToken(route: number): string {
  return `r${route}`;
}
