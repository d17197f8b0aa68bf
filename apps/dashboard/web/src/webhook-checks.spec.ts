import { checkTargetUrl, checkWebhookForm, type WebhookFormValues } from './webhook-checks';

const good: WebhookFormValues = {
  target_url: 'https://hooks.example.com/in',
  addresses: '0xabCDeF0123456789AbcdEf0123456789aBCDEF01',
  list_refs: [],
  phases: ['confirmed'],
  confirm_depth: '12',
  trigger_type: 'address_activity',
};

describe('checkWebhookForm', () => {
  it('passes a complete form', () => {
    expect(checkWebhookForm(good)).toEqual({});
    expect(checkWebhookForm({ ...good, addresses: '', list_refs: ['7'] })).toEqual({});
  });

  it('names every problem at once, each under its field (QA: one at a time, schema words)', () => {
    expect(
      checkWebhookForm({
        ...good,
        target_url: 'ftp://🦄.example',
        addresses: '0x1234',
        phases: [],
        confirm_depth: '1',
      }),
    ).toEqual({
      target_url: 'Use an https:// URL: events are sent over TLS only.',
      addresses:
        '"0x1234" is not an address: an address is 0x and 40 hex digits, in mixed case only with its EIP-55 checksum.',
      phases: 'Pick at least one phase.',
      confirm_depth: 'Enter a whole number of blocks from 2 to 96.',
    });
  });

  it('calls a wrong checksum a typo, names the address in full and suggests its checksummed form (QA)', () => {
    expect(
      checkWebhookForm({
        ...good,
        addresses: '0x70997970C51812dc3A010C7d01b50e0d17dC79C8\n0x1234',
      }),
    ).toEqual({
      addresses:
        '"0x1234" is not an address: an address is 0x and 40 hex digits, in mixed case only with its EIP-55 checksum. ' +
        '"0x70997970C51812dc3A010C7d01b50e0d17dC79C8" has mixed case but a wrong EIP-55 checksum (a typo?): ' +
        'checksummed it is 0x70997970C51812dc3A010C7d01b50e0d17dc79C8, or give it all lower case.',
    });
  });

  it('asks for what an empty form lacks: the target and something to watch', () => {
    expect(checkWebhookForm({ ...good, target_url: ' ', addresses: '' })).toEqual({
      target_url: 'Enter the URL we send events to.',
      addresses: 'Enter at least one address, or pick an address list below.',
    });
  });

  it('checks the hashes of a transaction confirmation webhook, not its addresses', () => {
    const tx = { ...good, trigger_type: 'tx_confirmation', addresses: '' };
    expect(checkWebhookForm({ ...tx, tx_hashes: '' })).toEqual({
      filters: 'Enter at least one transaction hash to watch.',
    });
    expect(checkWebhookForm({ ...tx, tx_hashes: `0x${'ab'.repeat(32)}\n0x1234` })).toEqual({
      filters: '"0x1234" is not a transaction hash: a hash is 0x and 64 hex digits.',
    });
    expect(checkWebhookForm({ ...tx, tx_hashes: `0x${'AB'.repeat(32)}` })).toEqual({});
    // A filter set through the API (no hashes box): the API's to judge.
    expect(checkWebhookForm(tx)).toEqual({});
  });

  it('reads a target URL as a person types it', () => {
    expect(checkTargetUrl('hooks.example.com')).toBe(
      'Enter a full URL, like https://example.com/hooks.',
    );
    expect(checkTargetUrl('ftp://hooks.example.com')).toMatch(/https/);
    // Whether plain http is taken is the deployment's rule: the API says it.
    expect(checkTargetUrl('http://127.0.0.1:8080/hook')).toBeUndefined();
    expect(checkTargetUrl(' https://hooks.example.com/a?b=c ')).toBeUndefined();
  });
});
