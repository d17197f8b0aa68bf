import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  allConsumers,
  allEvents,
  allKvBuckets,
  allStreams,
  balanceChangedId,
  billingV1,
  bor,
  borCommon,
  consumerByDurable,
  Consumers,
  DeadLetterSubjects,
  eventForSubject,
  Events,
  Streams,
  Subjects,
  WebhookStatusEntrySchema,
  type BalanceStateChanged,
  type UsageRecorded,
} from './index';
import { subjectMatches } from './subjects';

/** A NATS subject filter match (`*` one token, `>` the rest). */
const matches = (filter: string, subject: string): boolean => subjectMatches(subject, filter);

const caps = {
  nodeRps: 20,
  accessTokens: 2,
  webhooks: {
    activeWebhooks: 1,
    addressesPerWebhook: 10,
    addressesPerAccount: 10,
    eventsPerSecond: 1,
    eventsBurst: 12,
    inlineAddresses: 1000,
    listRefs: 10,
    addressLists: 50,
    addressesPerList: 100000,
  },
  audit: { checksPerPeriod: 100, requestsPerSecond: 1 },
};

describe('subjects', () => {
  it('follow <context>.<entity>.<event>.v<major>.<token>', () => {
    expect(Subjects.chain.block.of('polygon-mainnet')).toBe(
      'chain.block.canonical.v1.polygon-mainnet',
    );
    expect(Subjects.billing.usage.of('acc_1')).toBe('billing.usage.recorded.v1.acc_1');
    for (const event of allEvents) expect(event.type).toMatch(/^[a-z]+\.[a-z]+\.[a-z-]+\.v\d+$/);
  });

  it.each(['a.b', 'x*', '>', '', 'with space'])('refuse the token %j', (token) => {
    expect(() => Subjects.chain.block.of(token)).toThrow(/invalid subject token/);
  });

  it('combined filters select exactly their event types', () => {
    expect(matches(Subjects.chain.blockEvents, Subjects.chain.block.of('eth-mainnet'))).toBe(true);
    expect(matches(Subjects.chain.blockEvents, Subjects.chain.removed.of('eth-mainnet'))).toBe(
      true,
    );
    expect(matches(Subjects.chain.blockEvents, DeadLetterSubjects.of('chain', 'x'))).toBe(false);
    expect(matches(Subjects.billing.accountChanges, Subjects.billing.planChanged.of('a'))).toBe(
      true,
    );
    expect(matches(Subjects.billing.accountChanges, Subjects.billing.balanceChanged.of('a'))).toBe(
      true,
    );
    expect(matches(Subjects.billing.accountChanges, Subjects.billing.usage.of('a'))).toBe(false);
  });

  it('maps a subject back to its event type', () => {
    expect(eventForSubject('chain.block.removed.v1.eth-mainnet')).toBe(Events.chainBlocksRemoved);
    expect(eventForSubject('chain.block.removed.v1')).toBeUndefined();
    expect(eventForSubject('chain.block.removed.v1.a.b')).toBeUndefined();
  });
});

describe('streams and consumers', () => {
  it('every event and dead-letter subject is captured by exactly its stream', () => {
    for (const event of allEvents) {
      const owners = allStreams.filter((s) =>
        s.subjects.some((f) =>
          matches(f, event.subjectOf({ id: 'x', network: 'n', accountId: 'a' } as never)),
        ),
      );
      expect(owners.map((s) => s.name)).toEqual([event.stream]);
    }
    for (const c of allConsumers) {
      const owners = allStreams.filter((s) =>
        s.subjects.some((f) => matches(f, c.deadLetterSubject)),
      );
      expect(owners.map((s) => s.name)).toEqual([c.stream]);
    }
  });

  it('every consumer filter lies inside its stream and is unique by durable', () => {
    for (const c of allConsumers) {
      const stream = Streams[c.stream];
      expect(
        stream.subjects.some((f) => f.endsWith('>') && c.filterSubject.startsWith(f.slice(0, -1))),
      ).toBe(true);
      expect(consumerByDurable(c.durable)).toBe(c);
      expect(c.maxDeliver).toBeGreaterThan(1);
      expect(c.backoffMs.length).toBeGreaterThan(0);
    }
    expect(new Set(allConsumers.map((c) => c.durable)).size).toBe(allConsumers.length);
  });

  it('the delivery consumer waits like the spec: 5 s … 30 min, ack wait above the 20 s request budget', () => {
    expect(Consumers.workerDeliveryJobs.backoffMs).toEqual([
      5e3, 15e3, 30e3, 60e3, 300e3, 900e3, 1800e3,
    ]);
    expect(Consumers.workerDeliveryJobs.ackWaitMs).toBeGreaterThan(20_000);
  });

  it('bucket names are valid KV names', () => {
    for (const b of allKvBuckets) expect(b.name).toMatch(/^[A-Za-z0-9_-]+$/);
  });
});

describe('payload schemas', () => {
  const balance: BalanceStateChanged = {
    id: balanceChangedId('acc_1', 3),
    accountId: 'acc_1',
    version: 3,
    state: 'exhausted',
    exhaustedSince: '2026-01-01T00:00:00.000Z',
    allowanceCu: -40,
    purchasedCu: 0,
    pendingTopUpCu: 1000,
    allowanceResetsAt: '2026-01-01T07:30:00.000Z',
    planId: 'free',
    accountType: 'individual',
    nodeOwner: false,
    caps,
    at: '2026-01-01T00:00:01.000Z',
  };

  it('accept a valid balance change and refuse an inconsistent one', () => {
    expect(Events.balanceStateChanged.schema.parse(balance)).toEqual(balance);
    expect(
      Events.balanceStateChanged.schema.safeParse({ ...balance, exhaustedSince: null }).success,
    ).toBe(false);
    expect(Events.balanceStateChanged.subjectOf(balance)).toBe('billing.balance.changed.v1.acc_1');
    expect(Events.balanceStateChanged.messageIdOf(balance)).toBe('acc_1:balance:3');
  });

  it('usage: both kinds, total must match the items', () => {
    const node: UsageRecorded = {
      id: 'gw-1:acc_1:2026-01-01T00:00:00.000Z',
      kind: 'node',
      accountId: 'acc_1',
      producerId: 'gw-1',
      windowStart: '2026-01-01T00:00:00.000Z',
      windowEnd: '2026-01-01T00:00:01.000Z',
      items: [
        { network: 'eth-mainnet', method: 'eth_call', calls: 3, cu: 60 },
        { network: 'eth-mainnet', method: 'debug_traceCall', calls: 1, cu: 40 },
      ],
      totalCu: 100,
    };
    expect(Events.usageRecorded.schema.safeParse(node).success).toBe(true);
    expect(Events.usageRecorded.schema.safeParse({ ...node, totalCu: 99 }).success).toBe(false);
    const delivery = {
      ...node,
      kind: 'webhook_delivery',
      items: [{ webhookId: 'wh_1', attempts: 2, cu: 50 }],
      totalCu: 50,
    };
    expect(Events.usageRecorded.schema.safeParse(delivery).success).toBe(true);
    expect(
      Events.usageRecorded.schema.safeParse({
        ...node,
        items: [{ ...node.items[0]!, cu: 1.5 }],
        totalCu: 1.5,
      }).success,
    ).toBe(false);
  });

  it('delivery job body never has confirmed and removed both true', () => {
    const job = {
      id: 'wh_1:ev_1:removed',
      webhookId: 'wh_1',
      accountId: 'acc_1',
      eventId: 'ev_1',
      phase: 'removed',
      test: false,
      attempt: 1,
      payload: {
        webhookId: 'wh_1',
        eventId: 'ev_1',
        type: 'address_activity',
        network: 'eth-mainnet',
        confirmed: false,
        removed: true,
        block: { number: '0x10', hash: `0x${'a'.repeat(64)}`, timestamp: '0x5' },
        raw: { hash: `0x${'b'.repeat(64)}` },
      },
      createdAt: '2026-01-01T00:00:00.000Z',
    };
    expect(Events.deliveryJob.schema.safeParse(job).success).toBe(true);
    expect(
      Events.deliveryJob.schema.safeParse({ ...job, payload: { ...job.payload, confirmed: true } })
        .success,
    ).toBe(false);
    // The job never carries signing secrets (they stay sealed in the webhook-status bucket).
    expect(
      Object.keys(Events.deliveryJob.schema.parse({ ...job, secrets: ['whsec_a'] })),
    ).not.toContain('secrets');
    // Its subject is its route's (ADR 0432); a job without one (published before routes) is 0.
    const parsed = Events.deliveryJob.schema.parse(job);
    expect(parsed.route).toBe(0);
    expect(Events.deliveryJob.subjectOf({ ...parsed, route: 3 })).toBe(
      'webhook.delivery.requested.v1.r3',
    );
    // The earlier phases it names are phases; a job of an older matcher names none (absent).
    expect(parsed.earlierPhases).toBeUndefined();
    const named = { ...job, earlierPhases: ['unconfirmed', 'confirmed'] };
    expect(Events.deliveryJob.schema.parse(named).earlierPhases).toEqual(named.earlierPhases);
    expect(
      Events.deliveryJob.schema.safeParse({ ...job, earlierPhases: ['pending'] }).success,
    ).toBe(false);
  });

  it('a webhook-status entry carries only sealed secrets, at most two', () => {
    const entry = {
      webhookId: 'wh_1',
      accountId: 'acc_1',
      status: 'active',
      version: 3,
      targetUrl: 'https://example.com/hook',
      secrets: [{ sealed: 'v1.abc', expiresAt: null }],
      updatedAt: '2026-01-01T00:00:00.000Z',
    };
    expect(WebhookStatusEntrySchema.safeParse(entry).success).toBe(true);
    const three = Array.from({ length: 3 }, () => ({ sealed: 'v1.abc', expiresAt: null }));
    expect(WebhookStatusEntrySchema.safeParse({ ...entry, secrets: three }).success).toBe(false);
    expect(WebhookStatusEntrySchema.safeParse({ ...entry, targetUrl: 'ftp://x' }).success).toBe(
      false,
    );
  });

  it('earlier previous secrets travel beside the two a worker of the first contract reads', () => {
    const at = '2026-01-02T00:00:00.000Z';
    const entry = {
      webhookId: 'wh_1',
      accountId: 'acc_1',
      status: 'active',
      version: 3,
      targetUrl: 'https://example.com/hook',
      secrets: [
        { sealed: 'v1.c', expiresAt: null },
        { sealed: 'v1.p2', expiresAt: at },
      ],
      earlierSecrets: [{ sealed: 'v1.p1', expiresAt: at }],
      updatedAt: '2026-01-01T00:00:00.000Z',
    };
    expect(WebhookStatusEntrySchema.parse(entry).earlierSecrets).toHaveLength(1);
    // the first contract (no earlierSecrets field) still parses it, with its two secrets
    const first = WebhookStatusEntrySchema.omit({ earlierSecrets: true });
    expect(first.parse(entry).secrets).toHaveLength(2);
    // an earlier secret always has its expiry
    const noExpiry = { ...entry, earlierSecrets: [{ sealed: 'v1.p1', expiresAt: null }] };
    expect(WebhookStatusEntrySchema.safeParse(noExpiry).success).toBe(false);
  });
});

describe('generated protobuf code', () => {
  it('billing.v1 round-trips bigint CU through the binary format', () => {
    const response = create(billingV1.ResolveAccessTokenResponseSchema, {
      found: true,
      accountId: 'acc_1',
      networkKey: 'polygon-mainnet',
      account: { balance: { status: billingV1.BalanceStatus.OK, allowanceCu: 90_000_000n } },
    });
    const back = fromBinary(
      billingV1.ResolveAccessTokenResponseSchema,
      toBinary(billingV1.ResolveAccessTokenResponseSchema, response),
    );
    expect(back.account?.balance?.allowanceCu).toBe(90_000_000n);
    expect(billingV1.BillingService.typeName).toBe('billing.v1.BillingService');
  });

  it('bor keeps the upstream package, service, method order and field numbers', () => {
    expect(bor.BorApi.typeName).toBe('bor.BorApi');
    expect(bor.BorApi.methods.map((m) => m.name)).toEqual([
      'GetRootHash',
      'GetVoteOnHash',
      'HeaderByNumber',
      'BlockByNumber',
      'TransactionReceipt',
      'BorBlockReceipt',
      'GetStartBlockHeimdallSpanID',
      'GetAuthor',
      'GetTdByHash',
      'GetTdByNumber',
      'GetBlockInfoInBatch',
    ]);
    expect(borCommon.H256Schema.typeName).toBe('common.H256');
    const header = bor.HeaderSchema.fields.map((f) => [f.name, f.number]);
    expect(header.slice(0, 3)).toEqual([
      ['number', 1],
      ['parentHash', 2],
      ['time', 3],
    ]);
    expect(header.at(-1)).toEqual(['requestsHash', 21]);
    expect(
      bor.GetStartBlockHeimdallSpanIDResponseSchema.fields.map((f) => [f.name, f.number]),
    ).toEqual([
      ['StartBlock', 1],
      ['HeimdallSpanID', 2],
    ]);
    expect(bor.ReceiptSchema.field.blockNumber.number).toBe(14);
  });
});
