import { ledgerUsageConsumersOf } from './consumers';
import { subjectMatches } from './subjects';

describe('subjectMatches (NATS filters: * one token, > the rest)', () => {
  it.each<[string, string, boolean]>([
    ['billing.usage.flushed.v2.u1', 'billing.usage.flushed.v2.u1', true],
    ['billing.usage.flushed.v2.u1', 'billing.usage.flushed.v2.u0', false],
    ['billing.usage.flushed.v2.u1', 'billing.usage.>', true],
    ['billing.usage', 'billing.usage.>', false],
    ['billing.usage.flushed.v1.gw-1', 'billing.usage.*.v1.*', true],
    ['billing.usage.recorded.v1.acc_1', 'billing.usage.*.v1.*', true],
    ['billing.usage.flushed.v2.gw-1', 'billing.usage.*.v1.*', false],
    ['billing.usage.flushed.v1.gw-1.x', 'billing.usage.*.v1.*', false],
    ['billing.usage.flushed.v1', 'billing.usage.*.v1.*', false],
  ])('%s against %s: %s', (subject, filter, matches) => {
    expect(subjectMatches(subject, filter)).toBe(matches);
  });

  it("the ledger's usage durables read every usage partition and v1; a v2 subject of no usage partition is unread", () => {
    const filters = ledgerUsageConsumersOf().map((c) => c.filterSubject);
    const unread = (subject: string) => !filters.some((f) => subjectMatches(subject, f));
    for (let k = 0; k < 8; k++) expect(unread(`billing.usage.flushed.v2.u${k}`)).toBe(false);
    expect(unread('billing.usage.flushed.v1.gw-1')).toBe(false);
    expect(unread('billing.usage.recorded.v1.acc_1')).toBe(false);
    expect(unread('billing.usage.flushed.v2.u8')).toBe(true);
    expect(unread('billing.usage.flushed.v2.gw-old-producer')).toBe(true);
  });
});
