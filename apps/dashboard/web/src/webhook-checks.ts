import { CONFIRM_DEPTH_MAX, CONFIRM_DEPTH_MIN, TX_HASH_PATTERN } from '@meridian/webhooks/bounds';
import { checkAddresses, checksumMistake, splitEntries } from './addresses';

/**
 * The webhook form's own checks before anything is sent: required fields and obvious formats,
 * every problem at once, each by the API's name of its field (placeErrors puts it under its
 * input). What only the API knows (plan limits, a list's existence, an unindexed network) stays
 * the API's to say.
 */
export interface WebhookFormValues {
  target_url: string;
  addresses: string;
  /** The hashes box, when the form shows it (a transaction confirmation webhook). */
  tx_hashes?: string;
  list_refs: string[];
  phases: string[];
  confirm_depth: string;
  trigger_type: string;
}

const quoted = (entries: string[]) => {
  const shown = entries.slice(0, 3).map((e) => `"${e.length > 20 ? `${e.slice(0, 20)}…` : e}"`);
  return entries.length > 3
    ? `${shown.join(', ')} and ${entries.length - 3} more`
    : shown.join(', ');
};

export function checkTargetUrl(value: string): string | undefined {
  const text = value.trim();
  if (!text) return 'Enter the URL we send events to.';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'Enter a full URL, like https://example.com/hooks.';
  }
  // http: is the API's to judge (a local deployment may take a loopback receiver); any other
  // scheme never is a webhook target.
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return 'Use an https:// URL: events are sent over TLS only.';
  if (!url.hostname) return 'Enter a full URL, like https://example.com/hooks.';
  return undefined;
}

export function checkWebhookForm(values: WebhookFormValues): Record<string, string> {
  const problems: Record<string, string> = {};
  const target = checkTargetUrl(values.target_url);
  if (target) problems['target_url'] = target;

  // A malformed entry is not an address; a wrong checksum is a typo of one, named in full with
  // its checksummed form, as the API's 400 names it (QA: cut short, called "not an address").
  const addresses = checkAddresses(values.addresses);
  const typos = new Set(addresses.wrongChecksum.map((w) => w.entry));
  const malformed = addresses.invalid.filter((e) => !typos.has(e));
  const said: string[] = [];
  if (malformed.length > 0)
    said.push(
      `${quoted(malformed)} ${malformed.length === 1 ? 'is not an address' : 'are not addresses'}: an address is 0x and 40 hex digits, in mixed case only with its EIP-55 checksum.`,
    );
  for (const { entry, expected } of addresses.wrongChecksum.slice(0, 3))
    said.push(checksumMistake(entry, expected));
  if (addresses.wrongChecksum.length > 3)
    said.push(`${addresses.wrongChecksum.length - 3} more have a wrong checksum.`);
  if (said.length > 0) problems['addresses'] = said.join(' ');

  if (values.tx_hashes !== undefined) {
    const hashes = splitEntries(values.tx_hashes);
    const bad = hashes.filter((h) => !TX_HASH_PATTERN.test(h));
    if (hashes.length === 0) problems['filters'] = 'Enter at least one transaction hash to watch.';
    else if (bad.length > 0)
      problems['filters'] =
        `${quoted(bad)} ${bad.length === 1 ? 'is not a transaction hash' : 'are not transaction hashes'}: a hash is 0x and 64 hex digits.`;
  } else if (
    values.trigger_type !== 'tx_confirmation' &&
    splitEntries(values.addresses).length === 0 &&
    values.list_refs.length === 0
  )
    problems['addresses'] ??= 'Enter at least one address, or pick an address list below.';

  if (values.phases.length === 0) problems['phases'] = 'Pick at least one phase.';

  const depth = values.confirm_depth.trim();
  const n = Number(depth);
  if (!depth || !Number.isInteger(n) || n < CONFIRM_DEPTH_MIN || n > CONFIRM_DEPTH_MAX)
    problems['confirm_depth'] =
      `Enter a whole number of blocks from ${CONFIRM_DEPTH_MIN} to ${CONFIRM_DEPTH_MAX}.`;
  return problems;
}
