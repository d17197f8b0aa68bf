import {
  accessTokensOverCap,
  capMessage,
  isCapError,
  planChangeRoute,
  planPausedSummary,
  planPauseExplanation,
  upgradeAdvice,
  webhookSlotsSummary,
} from './cap-errors';

describe('capMessage', () => {
  it.each([
    [
      'cap_active_webhooks_exceeded',
      { cap: 'activeWebhooks', limit: 1, requested: 2 },
      'Your plan allows 1 active webhook, and paused ones count too. Delete a webhook you no longer need to make room.',
    ],
    [
      'cap_active_webhooks_exceeded',
      { limit: 10 },
      'Your plan allows 10 active webhooks, and paused ones count too. Delete a webhook you no longer need to make room.',
    ],
    [
      'cap_addresses_exceeded',
      { limit: 10 },
      'Your plan allows 10 addresses per webhook, its own and those of its address lists together.',
    ],
    [
      'cap_account_addresses_exceeded',
      { limit: 100_000 },
      'Your plan allows 100,000 watched addresses across all your webhooks; a list used by two webhooks counts twice.',
    ],
    [
      'cap_inline_addresses_exceeded',
      { limit: 1000 },
      'A webhook can name at most 1,000 addresses directly; put more in an address list.',
    ],
    [
      'cap_list_refs_exceeded',
      { limit: 10 },
      'A webhook can refer to address lists at most 10 times; a list named twice counts twice.',
    ],
    [
      'cap_addresses_per_list_exceeded',
      { limit: 100_000 },
      'An address list can hold at most 100,000 addresses.',
    ],
    ['cap_address_lists_exceeded', { limit: 50 }, 'Your plan allows 50 address lists.'],
  ])('%s %j', (code, body, expected) => {
    const text = capMessage(code, body, 'plan limit x (1) would be exceeded');
    expect(text).toBe(expected);
    expect(text).not.toMatch(/[a-z][A-Z]/); // no camelCase cap names
  });

  it('keeps the message of a cap it does not know, as a sentence', () => {
    expect(capMessage('cap_new_thing_exceeded', { limit: 3 }, 'plan limit newThing (3) hit')).toBe(
      'Plan limit newThing (3) hit.',
    );
    expect(capMessage('cap_active_webhooks_exceeded', {}, 'too many.')).toBe('Too many.');
  });

  it('knows a cap code', () => {
    expect(isCapError('cap_list_refs_exceeded')).toBe(true);
    expect(isCapError('list_in_use')).toBe(false);
  });
});

describe('paused_plan in words, before any click (QA: only a refused Resume said why)', () => {
  const free = {
    active_webhooks: 1,
    addresses_per_account: 10,
    addresses_per_webhook: 10,
  };
  it.each([
    [
      'over the webhook count (Starter → Free with 4 webhooks)',
      { active_webhooks: 4, account_addresses: 10 },
      'This webhook is paused because your account is over its plan limits. You have 4 webhooks. Your plan allows 1 active webhook, and paused ones count too. Delete a webhook you no longer need to make room. Resume works once it fits; an upgrade resumes it by itself.',
    ],
    [
      'over both account caps (A 5, B 3, C 2 and D 20 on Free)',
      { active_webhooks: 4, account_addresses: 30 },
      'This webhook is paused because your account is over its plan limits. You have 4 webhooks. Your plan allows 1 active webhook, and paused ones count too. Delete a webhook you no longer need to make room. Your plan allows 10 watched addresses across all your webhooks; a list used by two webhooks counts twice. Resume works once it fits; an upgrade resumes it by itself.',
    ],
    [
      'over neither: the webhook itself is too large',
      { active_webhooks: 1, account_addresses: 0 },
      'This webhook is paused because your account is over its plan limits. Your plan allows 10 addresses per webhook, its own and those of its address lists together. Resume works once it fits; an upgrade resumes it by itself.',
    ],
  ])('%s', (_, usage, words) => {
    expect(planPauseExplanation({ caps: free, usage }, null)).toBe(words);
  });

  it('a webhook over a per-webhook cap names it, as its refused resume does (QA: W4, 20 on Free)', () => {
    // W1 (2, paused by hand), W2 (5), W3 (3), W4 (20, newest): Resume on W4 is 409
    // cap_addresses_exceeded, limit 10, requested 20; deleting the others cannot make it fit.
    const usage = { active_webhooks: 4, account_addresses: 30 };
    // The record's usage, as webhook-matcher counts it for the per-webhook caps.
    const w4 = { addresses: 20, inline_addresses: 20, list_refs: 0 };
    expect(planPauseExplanation({ caps: free, usage }, w4)).toBe(
      'This webhook is paused because it is over its plan limits. This webhook watches 20 addresses; your plan allows 10 per webhook — remove addresses or upgrade. Resume works once it fits; an upgrade resumes it by itself.',
    );
    // Within its own caps (W3, 3 addresses), the account's caps are the reason.
    const w3 = { addresses: 3, inline_addresses: 3, list_refs: 0 };
    expect(planPauseExplanation({ caps: free, usage }, w3)).toMatch(
      /^This webhook is paused because your account is over its plan limits\. You have 4 webhooks\./,
    );
  });

  it('a webhook that fits again (the owner deleted another) is told Resume makes it active (QA: it read the per-webhook cap)', () => {
    // W3 (3 addresses) after W1, W2 and W4 were deleted: 1 webhook of 1, 3 addresses of 10.
    const usage = { active_webhooks: 1, account_addresses: 3 };
    const w3 = { addresses: 3, inline_addresses: 3, list_refs: 0 };
    expect(planPauseExplanation({ caps: free, usage }, w3)).toBe(
      'This webhook was paused because your account was over its plan limits, and it now fits your plan: Resume makes it active again.',
    );
  });

  it('each per-webhook cap the webhook is over, in the order a resume names them', () => {
    const caps = { ...free, list_refs: 1, inline_addresses: 3 };
    const held = { inline_addresses: 4, list_refs: 2, addresses: 12 };
    expect(planPauseExplanation({ caps, usage: {} }, held)).toBe(
      'This webhook is paused because it is over its plan limits. This webhook refers to address lists 2 times; your plan allows 1 per webhook — remove list references or upgrade. This webhook names 4 addresses directly; your plan allows 3 — move some to an address list or upgrade. This webhook watches 12 addresses; your plan allows 10 per webhook — remove addresses or upgrade. Resume works once it fits; an upgrade resumes it by itself.',
    );
  });
  it('the webhook bar says every webhook counts and the plan names active ones (was "3 of 1")', () => {
    expect(webhookSlotsSummary(3, 1)).toBe('3 webhooks, plan allows 1 active');
    expect(webhookSlotsSummary(1, 10)).toBe('1 webhook, plan allows 10 active');
  });
});

describe('accessTokensOverCap (QA: after a downgrade, tokens over the cap kept working unexplained)', () => {
  it('says they keep working and what a new one needs; nothing within the cap', () => {
    expect(accessTokensOverCap(3, 2)).toBe(
      'You hold 3 access tokens and your plan allows 2. They all keep working, and rolling one still works; to make a new one, delete 2 tokens you no longer use, or upgrade your plan.',
    );
    expect(accessTokensOverCap(2, 2)).toBeNull();
    expect(accessTokensOverCap(0, 2)).toBeNull();
  });
});

describe('who upgrades, in the "or upgrade" advice (QA: no plan control behind it)', () => {
  it('an owner with self-service billing, a member through an owner, else the operator', () => {
    expect(planChangeRoute(true, 'owner')).toBe('self');
    expect(planChangeRoute(true, 'member')).toBe('owner');
    expect(planChangeRoute(false, 'owner')).toBe('operator');
    expect(planChangeRoute(false, 'member')).toBe('operator');
  });

  it('appends who changes the plan to the advice that names an upgrade', () => {
    const free = { active_webhooks: 1, addresses_per_account: 10, addresses_per_webhook: 10 };
    const usage = { active_webhooks: 4, account_addresses: 30 };
    const w4 = { addresses: 20, inline_addresses: 20, list_refs: 0 };
    expect(planPauseExplanation({ caps: free, usage }, w4, 'operator')).toMatch(
      / an upgrade resumes it by itself\. Plans are changed by the operator of this service: ask them to upgrade your account\.$/,
    );
    expect(accessTokensOverCap(3, 2, 'self')).toMatch(
      /or upgrade your plan\. You change your plan on the Plan page\.$/,
    );
    expect(upgradeAdvice('owner')).toBe(
      "Only an owner of the account changes its plan: ask one of the account's owners.",
    );
  });
});

describe('planPausedSummary (QA: after a downgrade Overview said nothing of paused webhooks)', () => {
  it('counts the paused_plan webhooks only; nothing when none is', () => {
    expect(
      planPausedSummary(['active', 'paused_plan', 'paused', 'paused_plan', 'paused_plan']),
    ).toBe('3 webhooks paused: over plan limits');
    expect(planPausedSummary(['paused_plan'])).toBe('1 webhook paused: over plan limits');
    expect(planPausedSummary(['active', 'paused'])).toBeNull();
  });
});
