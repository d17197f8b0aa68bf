import {
  normalizeFilter,
  txActivity,
  logActivity,
  TRANSFER_BATCH_TOPIC,
  TRANSFER_SINGLE_TOPIC,
  TRANSFER_TOPIC,
} from '@meridian/webhooks';
import { pad } from 'viem';
import { MatchIndex, type IndexedWebhook } from './match-index';

const addr = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const TX = '0x' + '11'.repeat(32);
const LIST = 'al_' + 'a'.repeat(24);
const LIST2 = 'al_' + 'b'.repeat(24);
const R = 'opbnb-mainnet';
const P = 'polygon-mainnet';
const topicOf = (address: string) => pad(address as `0x${string}`);

function webhook(
  id: string,
  filters: unknown,
  extra: Partial<IndexedWebhook> = {},
): IndexedWebhook {
  return {
    id,
    accountId: 'acc_1',
    network: R,
    triggerType: 'address_activity',
    tree: normalizeFilter({ filters }).tree,
    confirmDepth: 2,
    phases: ['unconfirmed', 'confirmed'],
    targetUrl: 'https://hooks.example.com/in',
    ...extra,
  };
}

function matches(
  index: MatchIndex,
  activity = txActivity({ hash: TX, from: addr(1), to: addr(2) }),
  network: string = R,
) {
  const out: string[] = [];
  index.match(network, activity, (w) => out.push(w.id));
  return out.sort();
}

describe('MatchIndex', () => {
  it('finds webhooks by inline and listed addresses, once each, on their network only', () => {
    const index = new MatchIndex();
    index.upsertWebhook(webhook('wh_a', { address: { in: [addr(1), addr(2)] } }));
    expect(
      index.upsertWebhook(webhook('wh_b', { address: { dir: 'in', list_refs: [LIST] } })),
    ).toEqual([LIST]);
    index.upsertWebhook(webhook('wh_c', { address: { in: [addr(1)] } }, { network: P }));
    expect(matches(index)).toEqual(['wh_a']);
    index.addListEntries(LIST, [addr(2), addr(9)]);
    expect(matches(index)).toEqual(['wh_a', 'wh_b']);
    index.removeListEntries(LIST, [addr(2)]);
    expect(matches(index)).toEqual(['wh_a']);
    expect(matches(index, undefined, P)).toEqual(['wh_c']);
  });

  it('shares a list between webhooks and forgets it with the last one', () => {
    const index = new MatchIndex();
    index.upsertWebhook(webhook('wh_a', { address: { list_refs: [LIST] } }));
    expect(index.upsertWebhook(webhook('wh_b', { address: { list_refs: [LIST, LIST2] } }))).toEqual(
      [LIST2],
    );
    index.replaceList(LIST, [addr(1)]);
    index.replaceList(LIST2, [addr(1)]);
    expect(matches(index)).toEqual(['wh_a', 'wh_b']);
    index.replaceList(LIST, [addr(3)]);
    expect(matches(index)).toEqual(['wh_b']);
    index.removeWebhook('wh_b');
    expect(index.isListReferenced(LIST2)).toBe(false);
    expect(matches(index)).toEqual([]);
    expect(index.addressCount).toBe(1);
  });

  it('keeps an address in several lists apart per list, and a reused list number starts empty', () => {
    const LIST3 = 'al_' + 'c'.repeat(24);
    const LIST4 = 'al_' + 'd'.repeat(24);
    const index = new MatchIndex();
    index.upsertWebhook(webhook('wh_a', { address: { list_refs: [LIST] } }));
    index.upsertWebhook(webhook('wh_b', { address: { list_refs: [LIST2] } }));
    index.upsertWebhook(webhook('wh_c', { address: { list_refs: [LIST3] } }));
    for (const list of [LIST, LIST2, LIST3]) index.addListEntries(list, [addr(1), addr(1)]);
    expect(matches(index)).toEqual(['wh_a', 'wh_b', 'wh_c']);
    expect(index.addressCount).toBe(1);
    index.removeListEntries(LIST2, [addr(1)]);
    expect(matches(index)).toEqual(['wh_a', 'wh_c']);
    index.removeListEntries(LIST, [addr(1)]);
    expect(matches(index)).toEqual(['wh_c']);
    expect(index.listMembers(LIST3)).toEqual(new Set([addr(1)]));
    // wh_b's list is dropped; the next list takes its number and none of its members.
    index.addListEntries(LIST2, [addr(2)]);
    index.removeWebhook('wh_b');
    index.upsertWebhook(webhook('wh_d', { address: { list_refs: [LIST4] } }));
    expect(matches(index)).toEqual(['wh_c']);
    expect(index.listMembers(LIST4)).toEqual(new Set());
    index.addListEntries(LIST4, [addr(2)]);
    expect(matches(index)).toEqual(['wh_c', 'wh_d']);
  });

  it('matches contracts and topics for log_event webhooks, never transactions', () => {
    const index = new MatchIndex();
    const token = addr(7);
    index.upsertWebhook(
      webhook(
        'wh_log',
        { all: [{ contract: { in: [token] } }, { topic: { position: 0, in: [TRANSFER_TOPIC] } }] },
        { triggerType: 'log_event' },
      ),
    );
    index.upsertWebhook(
      webhook('wh_tx', { tx_hash: { in: [TX] } }, { triggerType: 'tx_confirmation' }),
    );
    const log = logActivity({
      address: token,
      topics: [TRANSFER_TOPIC, pad(addr(1) as `0x${string}`), pad(addr(2) as `0x${string}`)],
      data: '0x',
      logIndex: '0x0',
      transactionHash: TX,
    });
    expect(matches(index, log)).toEqual(['wh_log']);
    expect(matches(index, txActivity({ hash: TX, from: addr(1), to: token }))).toEqual(['wh_tx']);
  });

  it.each([
    ['TransferSingle', TRANSFER_SINGLE_TOPIC],
    ['TransferBatch', TRANSFER_BATCH_TOPIC],
  ])('finds ERC-1155 %s participants by dir (from = out, to = in)', (_name, topic0) => {
    const index = new MatchIndex();
    const [operator, from, to] = [addr(20), addr(21), addr(22)];
    index.upsertWebhook(webhook('wh_out_from', { address: { dir: 'out', in: [from] } }));
    index.upsertWebhook(webhook('wh_in_from', { address: { dir: 'in', in: [from] } }));
    index.upsertWebhook(webhook('wh_in_to', { address: { dir: 'in', in: [to] } }));
    index.upsertWebhook(webhook('wh_out_to', { address: { dir: 'out', in: [to] } }));
    index.upsertWebhook(webhook('wh_any_to', { address: { list_refs: [LIST] } }));
    index.addListEntries(LIST, [to]);
    index.upsertWebhook(webhook('wh_operator', { address: { in: [operator] } }));
    const log = logActivity({
      address: addr(7),
      topics: [topic0, topicOf(operator), topicOf(from), topicOf(to)],
      data: '0x',
      logIndex: '0x1',
      transactionHash: TX,
    });
    expect(matches(index, log)).toEqual(['wh_any_to', 'wh_in_to', 'wh_out_from']);
  });

  it('finds tx_confirmation webhooks by watched transaction hash, the transaction only', () => {
    const index = new MatchIndex();
    const other = '0x' + '22'.repeat(32);
    index.upsertWebhook(
      webhook('wh_confirm', { tx_hash: { in: [TX] } }, { triggerType: 'tx_confirmation' }),
    );
    index.upsertWebhook(webhook('wh_all_of_tx', { tx_hash: { in: [TX] } }));
    index.upsertWebhook(
      webhook('wh_other', { tx_hash: { in: [other] } }, { triggerType: 'tx_confirmation' }),
    );
    const tx = txActivity({ hash: TX, from: addr(1), to: addr(2) });
    expect(matches(index, tx)).toEqual(['wh_all_of_tx', 'wh_confirm']);
    const log = logActivity({
      address: addr(7),
      topics: [TRANSFER_TOPIC],
      data: '0x',
      logIndex: '0x0',
      transactionHash: TX,
    });
    expect(matches(index, log)).toEqual(['wh_all_of_tx']);
    expect(matches(index, tx, P)).toEqual([]);
    index.removeWebhook('wh_confirm');
    expect(matches(index, tx)).toEqual(['wh_all_of_tx']);
  });

  it('evaluates trees that hold without a positive leaf against every activity', () => {
    const index = new MatchIndex();
    index.upsertWebhook(webhook('wh_not', { not: { address: { in: [addr(1)] } } }));
    expect(matches(index)).toEqual([]);
    expect(matches(index, txActivity({ hash: TX, from: addr(4), to: addr(5) }))).toEqual([
      'wh_not',
    ]);
  });

  it('replaces a webhook on upsert and stops matching it when removed', () => {
    const index = new MatchIndex();
    index.upsertWebhook(webhook('wh_a', { address: { in: [addr(1)] } }));
    index.upsertWebhook(webhook('wh_a', { address: { in: [addr(3)] } }));
    expect(matches(index)).toEqual([]);
    index.upsertWebhook(webhook('wh_a', { address: { in: [addr(2)] } }));
    expect(matches(index)).toEqual(['wh_a']);
    index.removeWebhook('wh_a');
    expect(matches(index)).toEqual([]);
    expect(index.webhookCount).toBe(0);
  });
});
