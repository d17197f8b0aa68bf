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

  it('a webhook that does not fit takes nothing; the next one is considered (QA: Starter → Free with A 5, B 3, C 2, D 20 paused all four)', () => {
    // Newest first: D (20) is over Free's 10 per webhook and paused; C (2) takes the one slot
    // and 2 of the 10 account addresses; B and A find no slot left.
    const account = [wh('D', 20), wh('C', 2), wh('B', 3), wh('A', 5)];
    expect([...fittingWebhooks(free, account, lists)]).toEqual(['C']);
    expect(Object.fromEntries(planFitCounts(free, account, lists))).toEqual({
      D: { cap: 'addressesPerWebhook', requested: 20 },
      C: null,
      // A resume names the counts as /limits shows them (rules 1 and 3: paused ones included).
      B: { cap: 'activeWebhooks', requested: 4 },
      A: { cap: 'activeWebhooks', requested: 4 },
    });
    // With room for two: C and then B fit (2 + 3 of 10); A (5 more) is over what is left.
    const two = { ...free, activeWebhooks: 2, addressesPerAccount: 9 };
    expect([...fittingWebhooks(two, account, lists)]).toEqual(['C', 'B']);
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
    // b is over what the account cap has left and takes nothing, so a takes the second slot
    // (70,000 addresses); z finds no slot. The counts named are the account's, 6 webhooks and
    // 181,002 addresses (40,000 + 40,000 + 30,000 + 1 + 1,001 + 70,000), as /limits shows them.
    expect(Object.fromEntries(counts)).toEqual({
      c: null,
      b: { cap: 'addressesPerAccount', requested: 181_002 },
      a: null,
      z: { cap: 'activeWebhooks', requested: 6 },
      y: { cap: 'inlineAddresses', requested: 1_001 },
      x: { cap: 'listRefs', requested: 11 },
    });
  });

  it('keeps the running webhooks within the account cap, newest first; one that does not fit leaves its room to older ones', () => {
    const caps = { ...starter, addressesPerAccount: 79_999 };
    // b (40,000 more) does not fit in what c left; a (30,000) does: 70,000 run.
    const three = [wh('c', 0, ['L1']), wh('b', 0, ['L1']), wh('a', 0, ['L2'])];
    expect([...fittingWebhooks(caps, three, lists)]).toEqual(['c', 'a']);
  });

  it('one account-address count (rule 3): /limits, a refused create, PATCH, list add and resume name the same number', () => {
    // Downgraded to 20 addresses: newest (10) stays, big (20) is paused_plan, small (5) fits in
    // what is left.
    const caps = { ...starter, addressesPerAccount: 20 };
    const sizes = new Map([['L', 10]]);
    const newest = wh('newest', 0, ['L']);
    const account = [newest, wh('big', 20), wh('small', 5)];
    expect(accountAddresses(account, sizes)).toBe(35);
    // A resume of big names the account's 35, as /limits shows it.
    expect(Object.fromEntries(planFitCounts(caps, account, sizes))).toEqual({
      newest: null,
      big: { cap: 'addressesPerAccount', requested: 35 },
      small: null,
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
