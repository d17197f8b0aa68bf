import { isDomainError } from '@meridian/errors';
import { PLANS } from './plan.table';
import {
  accountAddresses,
  activeWebhookCount,
  addressesOfWebhook,
  checkListCreate,
  checkListResize,
  checkListSize,
  checkWebhookWrite,
  fittingWebhooks,
  planFit,
  planFitCounts,
  type CountedWebhook,
} from './webhook-counting';

const free = PLANS.free.webhooks; // 1 webhook, 10 per webhook, 10 per account
const starter = PLANS.starter.webhooks; // 10, 100k, 100k
const wh = (id: string, inline: number, listRefs: string[] = []): CountedWebhook => ({
  id,
  inlineAddresses: inline,
  listRefs,
});
const lists = new Map([
  ['L1', 40_000],
  ['L2', 30_000],
]);

const codeOf = (fn: () => void): string => {
  try {
    fn();
    return 'ok';
  } catch (error) {
    return isDomainError(error) ? error.code : 'thrown';
  }
};

describe('counting (rules 1–3)', () => {
  it('sums own and list addresses without de-duplication; a shared list counts per webhook', () => {
    const a = wh('a', 5, ['L1']);
    const b = wh('b', 0, ['L1', 'L2']);
    expect(addressesOfWebhook(a, lists)).toBe(40_005);
    expect(addressesOfWebhook(b, lists)).toBe(70_000);
    expect(accountAddresses([a, b], lists)).toBe(110_005);
  });
});

describe('checkWebhookWrite (every webhook cap code)', () => {
  it.each([
    ['free: first webhook', free, wh('n', 10), [], true, 'ok'],
    [
      'free: a paused one still takes the slot',
      free,
      wh('n', 1),
      [wh('p', 1)],
      true,
      'cap_active_webhooks_exceeded',
    ],
    ['free: an update keeps its slot', free, wh('n', 2), [], false, 'ok'],
    ['free: 11 addresses', free, wh('n', 11), [], true, 'cap_addresses_exceeded'],
    [
      'starter: 11 lists',
      starter,
      wh(
        'n',
        0,
        Array.from({ length: 11 }, (_, i) => `L${i}`),
      ),
      [],
      true,
      'cap_list_refs_exceeded',
    ],
    ['starter: 1,001 inline', starter, wh('n', 1_001), [], true, 'cap_inline_addresses_exceeded'],
    [
      'lists over per-webhook',
      { ...starter, addressesPerWebhook: 70_000 },
      wh('n', 1, ['L1', 'L2']),
      [],
      true,
      'cap_addresses_exceeded',
    ],
    [
      'starter: account total over (shared list twice)',
      starter,
      wh('n', 0, ['L1', 'L2']),
      [wh('o', 0, ['L1'])],
      true,
      'cap_account_addresses_exceeded',
    ],
    [
      'starter: account total at the cap',
      starter,
      wh('n', 0, ['L1']),
      [wh('o', 20_000, ['L1'])],
      true,
      'ok',
    ],
  ] as const)('%s → %s', (_name, caps, candidate, others, isNew, expected) => {
    expect(codeOf(() => checkWebhookWrite(caps, { candidate, others, lists, isNew }))).toBe(
      expected,
    );
  });

  it('list caps: 50 lists per account, 100,000 per list, and a list change re-checks every webhook using it', () => {
    expect(codeOf(() => checkListCreate(starter, 49))).toBe('ok');
    expect(codeOf(() => checkListCreate(starter, 50))).toBe('cap_address_lists_exceeded');
    expect(codeOf(() => checkListResize(starter, 'L1', 100_001, [], lists))).toBe(
      'cap_addresses_per_list_exceeded',
    );
    const users = [wh('a', 0, ['L1']), wh('b', 0, ['L1'])];
    // 2 × 50,000 = 100,000: at the account cap.
    expect(codeOf(() => checkListResize(starter, 'L1', 50_000, users, lists))).toBe('ok');
    expect(codeOf(() => checkListResize(starter, 'L1', 50_001, users, lists))).toBe(
      'cap_account_addresses_exceeded',
    );
    expect(codeOf(() => checkListResize(free, 'L1', 11, [wh('a', 0, ['L1'])], new Map()))).toBe(
      'cap_addresses_exceeded',
    );
    // An unreferenced list only meets the per-list cap.
    expect(codeOf(() => checkListResize(free, 'L9', 100_000, users, lists))).toBe('ok');
  });

  it('checkListSize: the per-list cap alone (a create or replace, before any row is written)', () => {
    expect(codeOf(() => checkListSize(starter, 100_000))).toBe('ok');
    expect(codeOf(() => checkListSize(starter, 100_001))).toBe('cap_addresses_per_list_exceeded');
    try {
      checkListSize(free, 250_000);
    } catch (error) {
      expect((error as { details?: unknown }).details).toEqual({
        cap: 'addresses_per_list',
        limit: 100_000,
        requested: 250_000,
      });
    }
  });
});

describe('fittingWebhooks (downgrade keeps the newest that fit)', () => {
  it('keeps the newest within the slot count', () => {
    expect([...fittingWebhooks(free, [wh('c', 1), wh('b', 1), wh('a', 1)], lists)]).toEqual(['c']);
  });

  it('a webhook too large for the plan still holds its slot (rule 1: paused ones count)', () => {
    // It was skipped without a slot before, so the walk counted fewer webhooks than /limits.
    expect([...fittingWebhooks(free, [wh('big', 11), wh('small', 3)], lists)]).toEqual([]);
    // Room for big's 11 addresses too (rule 3 counts them, fitting or not), so only the slot
    // decides here.
    const two = { ...free, activeWebhooks: 2, addressesPerAccount: 14 };
    expect([...fittingWebhooks(two, [wh('big', 11), wh('small', 3)], lists)]).toEqual(['small']);
  });

  it('one active-webhook count (QA: /limits 4, create 5, resume 2): a resume names the count as /limits shows it', () => {
    // Downgraded to Free: the newest stays active, three are paused_plan, all four counted.
    const four = [wh('d', 1), wh('c', 1), wh('b', 1), wh('a', 1)];
    expect(activeWebhookCount(four)).toBe(4);
    const counts = planFitCounts(free, four, lists);
    expect(Object.fromEntries(counts)).toEqual({
      d: null,
      c: { cap: 'activeWebhooks', requested: 4 },
      b: { cap: 'activeWebhooks', requested: 4 },
      a: { cap: 'activeWebhooks', requested: 4 },
    });
    let create: unknown;
    try {
      checkWebhookWrite(free, { candidate: wh('new', 1), others: four, lists, isNew: true });
    } catch (error) {
      create = error;
    }
    expect(create).toMatchObject({
      code: 'cap_active_webhooks_exceeded',
      details: { limit: 1, requested: 5 },
    });
  });

  it('names the cap each webhook is over', () => {
    const fit = planFit(free, [wh('c', 1), wh('big', 11), wh('a', 1)], lists);
    expect([...fit]).toEqual([
      ['c', null],
      ['big', 'addressesPerWebhook'],
      ['a', 'activeWebhooks'],
    ]);
  });

  it('an update that shrinks passes even when a downgrade left the account over', () => {
    const caps = { ...starter, addressesPerAccount: 50_000 };
    const write = {
      candidate: wh('n', 10, ['L1']),
      others: [wh('o', 0, ['L2'])],
      lists,
      isNew: false,
    };
    expect(codeOf(() => checkWebhookWrite(caps, { ...write, previousAddresses: 40_020 }))).toBe(
      'ok',
    );
    expect(codeOf(() => checkWebhookWrite(caps, { ...write, previousAddresses: 40_000 }))).toBe(
      'cap_account_addresses_exceeded',
    );
  });

  it('planFitCounts: what making each non-fitting webhook active would bring its cap to', () => {
    const caps = { ...starter, activeWebhooks: 2, addressesPerAccount: 79_999 };
    const counts = planFitCounts(
      caps,
      [
        wh('c', 0, ['L1']),
        wh('b', 0, ['L1']),
        wh('a', 0, ['L2']),
        wh('z', 1),
        wh('y', 1_001),
        wh('x', 0, ['L1', 'L2', 'L3', 'L4', 'L5', 'L6', 'L7', 'L8', 'L9', 'L10', 'L11']),
      ],
      lists,
    );
    // b is over the account's addresses but holds its slot (rule 1), so a, third, is over the
    // two slots; the counts named are the account's, 6 webhooks and 181,002 addresses (40,000 +
    // 40,000 + 30,000 + 1 + 1,001 + 70,000), as /limits shows them.
    expect(Object.fromEntries(counts)).toEqual({
      c: null,
      b: { cap: 'addressesPerAccount', requested: 181_002 },
      a: { cap: 'activeWebhooks', requested: 6 },
      z: { cap: 'activeWebhooks', requested: 6 },
      y: { cap: 'inlineAddresses', requested: 1_001 },
      x: { cap: 'listRefs', requested: 11 },
    });
  });

  it('keeps the account total within its cap, newest first; a newer webhook that does not fit still uses its addresses (rule 3: paused ones count)', () => {
    const caps = { ...starter, addressesPerAccount: 79_999 };
    // b (40,000 more) does not fit, and paused it still counts: a (30,000 more) does not fit
    // behind it either (it did before: a downgrade kept a active, and the account over).
    const three = [wh('c', 0, ['L1']), wh('b', 0, ['L1']), wh('a', 0, ['L2'])];
    expect([...fittingWebhooks(caps, three, lists)]).toEqual(['c']);
    // Only deleting b (or an upgrade) makes room for a.
    expect([...fittingWebhooks(caps, [three[0]!, three[2]!], lists)]).toEqual(['c', 'a']);
  });

  it('one account-address count (rule 3): /limits, a refused create, PATCH, list add and resume name the same number', () => {
    // Downgraded to 20 addresses: newest (10) stays, big (20) and small (5) are paused_plan.
    const caps = { ...starter, addressesPerAccount: 20 };
    const sizes = new Map([['L', 10]]);
    const newest = wh('newest', 0, ['L']);
    const account = [newest, wh('big', 20), wh('small', 5)];
    expect(accountAddresses(account, sizes)).toBe(35);
    // A resume of either paused one names the account's 35 (old: big 30, small fitted at 15).
    expect(Object.fromEntries(planFitCounts(caps, account, sizes))).toEqual({
      newest: null,
      big: { cap: 'addressesPerAccount', requested: 35 },
      small: { cap: 'addressesPerAccount', requested: 35 },
    });
    const refusal = (fn: () => void) => {
      try {
        fn();
      } catch (error) {
        return (error as { details?: unknown }).details;
      }
      return 'ok';
    };
    const over = (requested: number) => ({ cap: 'addresses_per_account', limit: 20, requested });
    // A create, a PATCH growing newest by one, one more entry in L: 35 + 1 each.
    expect(
      refusal(() =>
        checkWebhookWrite(caps, {
          candidate: wh('new', 1),
          others: account,
          lists: sizes,
          isNew: true,
        }),
      ),
    ).toEqual(over(36));
    expect(
      refusal(() =>
        checkWebhookWrite(caps, {
          candidate: wh('newest', 1, ['L']),
          others: account.slice(1),
          lists: sizes,
          isNew: false,
          previousAddresses: 10,
        }),
      ),
    ).toEqual(over(36));
    expect(refusal(() => checkListResize(caps, 'L', 11, account, sizes))).toEqual(over(36));
  });
});
