import { capMessage, isCapError } from './cap-errors';

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
    ['cap_list_refs_exceeded', { limit: 10 }, 'A webhook can use at most 10 address lists.'],
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
