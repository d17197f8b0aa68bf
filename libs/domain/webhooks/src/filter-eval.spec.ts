import { encodeAbiParameters, pad } from 'viem';
import {
  APPROVAL_TOPIC,
  TRANSFER_BATCH_TOPIC,
  TRANSFER_SINGLE_TOPIC,
  TRANSFER_TOPIC,
  logActivity,
  txActivity,
} from './block-activities';
import { eventIdOf } from './event-id';
import { compileFilter, needsPositiveLeaf, positiveKeys } from './filter-eval';
import { normalizeFilter } from './filter-model';
import { buildPayload, decodeTokenLog, payloadInPhase } from './payload';

const A = '0x' + 'aa'.repeat(20);
const B = '0x' + 'bb'.repeat(20);
const C = '0x' + 'cc'.repeat(20);
const TOKEN = '0x' + '70'.repeat(20);
const TX = '0x' + '11'.repeat(32);
const OTHER_TX = '0x' + '12'.repeat(32);
const OPERATOR = '0x' + 'dd'.repeat(20);
const noLists = () => false;
const topicOf = (address: string) => pad(address as `0x${string}`, { size: 32 });
const uint = (n: bigint) => encodeAbiParameters([{ type: 'uint256' }], [n]);

const erc20Transfer = (from: string, to: string, value: bigint, logIndex = 3) => ({
  address: TOKEN.toUpperCase().replace('0X', '0x'),
  topics: [TRANSFER_TOPIC, topicOf(from), topicOf(to)],
  data: uint(value),
  logIndex: `0x${logIndex.toString(16)}`,
  transactionHash: TX,
  transactionIndex: '0x0',
});

/** ERC-1155 TransferSingle / TransferBatch: topics operator, from, to; ids and values in data. */
const erc1155Single = (from: string, to: string) => ({
  address: TOKEN,
  topics: [TRANSFER_SINGLE_TOPIC, topicOf(OPERATOR), topicOf(from), topicOf(to)],
  data: encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }], [4n, 2n]),
  logIndex: '0x5',
  transactionHash: TX,
  transactionIndex: '0x0',
});
const erc1155Batch = (from: string, to: string) => ({
  address: TOKEN,
  topics: [TRANSFER_BATCH_TOPIC, topicOf(OPERATOR), topicOf(from), topicOf(to)],
  data: encodeAbiParameters(
    [{ type: 'uint256[]' }, { type: 'uint256[]' }],
    [
      [1n, 2n, 300n],
      [10n, 20n, 30n],
    ],
  ),
  logIndex: '0x6',
  transactionHash: TX,
  transactionIndex: '0x0',
});

const tree = (filters: unknown) => normalizeFilter({ filters }).tree;

describe('filter evaluation', () => {
  const tx = txActivity({ hash: TX, from: A, to: B });
  const log = logActivity(erc20Transfer(B, C, 5n));
  const single = logActivity(erc1155Single(A, B));
  const batch = logActivity(erc1155Batch(B, C));
  const otherTx = txActivity({ hash: OTHER_TX, from: A, to: B });

  it.each([
    ['out matches the sender', { address: { dir: 'out', in: [A] } }, tx, true],
    ['in does not match the sender', { address: { dir: 'in', in: [A] } }, tx, false],
    ['in matches the recipient', { address: { dir: 'in', in: [B] } }, tx, true],
    ['transfer from is out', { address: { dir: 'out', in: [B] } }, log, true],
    ['transfer to is in', { address: { dir: 'in', in: [C] } }, log, true],
    ['transfer to is not out', { address: { dir: 'out', in: [C] } }, log, false],
    ['any matches the log emitter', { address: { in: [TOKEN] } }, log, true],
    ['contract matches the emitter', { contract: { in: [TOKEN] } }, log, true],
    ['topic at its position', { topic: { position: 0, in: [TRANSFER_TOPIC] } }, log, true],
    ['topic at another position', { topic: { position: 1, in: [TRANSFER_TOPIC] } }, log, false],
    ['a transaction has no topics', { topic: { position: 0, in: [TRANSFER_TOPIC] } }, tx, false],
    ['1155 single: from is out', { address: { dir: 'out', in: [A] } }, single, true],
    ['1155 single: from is not in', { address: { dir: 'in', in: [A] } }, single, false],
    ['1155 single: to is in', { address: { dir: 'in', in: [B] } }, single, true],
    ['1155 single: to is not out', { address: { dir: 'out', in: [B] } }, single, false],
    ['1155 single: the operator is no participant', { address: { in: [OPERATOR] } }, single, false],
    ['1155 batch: from is out', { address: { dir: 'out', in: [B] } }, batch, true],
    ['1155 batch: to is in', { address: { dir: 'in', in: [C] } }, batch, true],
    ['1155 batch: to is not out', { address: { dir: 'out', in: [C] } }, batch, false],
    ['1155 batch: any matches a participant', { address: { dir: 'any', in: [C] } }, batch, true],
    ['tx_hash matches the transaction', { tx_hash: { in: [TX] } }, tx, true],
    ['tx_hash matches a log of the transaction', { tx_hash: { in: [TX] } }, batch, true],
    ['tx_hash ignores another transaction', { tx_hash: { in: [TX] } }, otherTx, false],
    ['tx_hash in any case', { tx_hash: { in: [TX.toUpperCase().replace('0X', '0x')] } }, tx, true],
    [
      'tx_hash and sender',
      { all: [{ tx_hash: { in: [TX, OTHER_TX] } }, { address: { dir: 'out', in: [B] } }] },
      otherTx,
      false,
    ],
    [
      'all needs every child',
      { all: [{ contract: { in: [TOKEN] } }, { address: { dir: 'in', in: [A] } }] },
      log,
      false,
    ],
    [
      'any needs one child',
      { any: [{ contract: { in: [A] } }, { address: { dir: 'in', in: [C] } }] },
      log,
      true,
    ],
    [
      'not inverts',
      { all: [{ contract: { in: [TOKEN] } }, { not: { address: { dir: 'in', in: [C] } } }] },
      log,
      false,
    ],
  ] as const)('%s', (_name, filters, activity, expected) => {
    expect(compileFilter(tree(filters))(activity, noLists)).toBe(expected);
  });

  it('asks the index about list membership', () => {
    const listed = tree({ address: { dir: 'in', list_refs: ['al_' + 'a'.repeat(24)] } });
    const f = compileFilter(listed);
    expect(f(tx, (list, address) => list === 'al_' + 'a'.repeat(24) && address === B)).toBe(true);
    expect(f(tx, noLists)).toBe(false);
  });

  it('knows which trees can be found by key', () => {
    expect(needsPositiveLeaf(tree({ address: { in: [A] } }))).toBe(true);
    expect(needsPositiveLeaf(tree({ not: { address: { in: [A] } } }))).toBe(false);
    expect(
      needsPositiveLeaf(
        tree({ any: [{ address: { in: [A] } }, { not: { contract: { in: [B] } } }] }),
      ),
    ).toBe(false);
    expect(
      positiveKeys(tree({ all: [{ address: { in: [A] } }, { not: { contract: { in: [B] } } }] })),
    ).toEqual({ addresses: [A], lists: [], contracts: [], topics: [], txHashes: [] });
    expect(needsPositiveLeaf(tree({ tx_hash: { in: [TX] } }))).toBe(true);
    expect(
      positiveKeys(
        tree({
          any: [{ tx_hash: { in: [TX] } }, { not: { tx_hash: { in: [OTHER_TX] } } }],
        }),
      ),
    ).toEqual({ addresses: [], lists: [], contracts: [], topics: [], txHashes: [TX] });
  });
});

describe('event ids', () => {
  const key = { network: 'R', blockHash: '0x' + '22'.repeat(32), txHash: TX, logIndex: 3 };
  it('are stable and differ per log, transaction and block', () => {
    expect(eventIdOf(key)).toBe(
      eventIdOf({ ...key, txHash: TX.toUpperCase().replace('0X', '0x') }),
    );
    expect(eventIdOf(key)).toMatch(/^ev_[0-9a-f]{32}$/);
    expect(eventIdOf(key)).not.toBe(eventIdOf({ ...key, logIndex: null }));
    expect(eventIdOf(key)).not.toBe(eventIdOf({ ...key, blockHash: '0x' + '33'.repeat(32) }));
  });

  it('keep the first occurrence as it was and give each return of a block a new id', () => {
    const first = eventIdOf(key);
    expect(eventIdOf({ ...key, occurrence: 0 })).toBe(first);
    const second = eventIdOf({ ...key, occurrence: 1 });
    const third = eventIdOf({ ...key, occurrence: 2 });
    expect(new Set([first, second, third]).size).toBe(3);
    expect(second).toMatch(/^ev_[0-9a-f]{32}$/);
    expect(eventIdOf({ ...key, occurrence: 1 })).toBe(second);
  });
});

describe('payload', () => {
  const block = { number: 300, hash: '0x' + '22'.repeat(32), timestamp: 1_700_000_000 };

  it('decodes ERC-20 Transfer with viem and writes numbers as hex', () => {
    const raw = erc20Transfer(A, B, 1_000_000n);
    const body = buildPayload({
      webhookId: 'wh_1',
      eventId: 'ev_1',
      type: 'address_activity',
      network: 'R',
      phase: 'unconfirmed',
      block,
      activity: logActivity(raw),
    });
    expect(body).toEqual({
      webhookId: 'wh_1',
      eventId: 'ev_1',
      type: 'address_activity',
      network: 'R',
      confirmed: false,
      removed: false,
      block: { number: '0x12c', hash: block.hash, timestamp: '0x6553f100' },
      raw,
      decoded: { standard: 'erc20', event: 'Transfer', from: A, to: B, value: '0xf4240' },
    });
    expect(payloadInPhase(body, 'removed')).toMatchObject({ confirmed: false, removed: true });
    expect(payloadInPhase(body, 'confirmed')).toMatchObject({ confirmed: true, removed: false });
  });

  it('decodes ERC-721 Transfer, ERC-20 Approval and ERC-1155 TransferSingle', () => {
    expect(decodeTokenLog([TRANSFER_TOPIC, topicOf(A), topicOf(B), uint(7n)], '0x')).toEqual({
      standard: 'erc721',
      event: 'Transfer',
      from: A,
      to: B,
      tokenId: '0x7',
    });
    expect(decodeTokenLog([APPROVAL_TOPIC, topicOf(A), topicOf(B)], uint(9n))).toEqual({
      standard: 'erc20',
      event: 'Approval',
      owner: A,
      spender: B,
      value: '0x9',
    });
    const data = encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }], [4n, 2n]);
    expect(
      decodeTokenLog([TRANSFER_SINGLE_TOPIC, topicOf(C), topicOf(A), topicOf(B)], data),
    ).toEqual({
      standard: 'erc1155',
      event: 'TransferSingle',
      operator: C,
      from: A,
      to: B,
      id: '0x4',
      value: '0x2',
    });
  });

  it('decodes ERC-1155 TransferBatch (ids and values as hex lists) into the payload', () => {
    const raw = erc1155Batch(A, B);
    const body = buildPayload({
      webhookId: 'wh_1',
      eventId: 'ev_1',
      type: 'address_activity',
      network: 'opbnb-mainnet',
      phase: 'unconfirmed',
      block,
      activity: logActivity(raw),
    });
    expect(body.raw).toBe(raw);
    expect(body.decoded).toEqual({
      standard: 'erc1155',
      event: 'TransferBatch',
      operator: OPERATOR,
      from: A,
      to: B,
      ids: ['0x1', '0x2', '0x12c'],
      values: ['0xa', '0x14', '0x1e'],
    });
    // A batch whose data does not decode (truncated) carries no `decoded`.
    expect(decodeTokenLog(raw.topics, raw.data.slice(0, 66))).toBeUndefined();
  });

  it('forwards a log whose data was omitted as it came, marker included, and decodes nothing', () => {
    // An ERC-721 Transfer's topics alone would decode; with its data left out it must not.
    const raw = {
      ...erc20Transfer(A, B, 1n),
      topics: [TRANSFER_TOPIC, topicOf(A), topicOf(B), uint(7n)],
      data: '0x',
      omitted: { data: 600_000 },
    };
    const body = buildPayload({
      webhookId: 'wh_1',
      eventId: 'ev_1',
      type: 'address_activity',
      network: 'R',
      phase: 'unconfirmed',
      block,
      activity: logActivity(raw),
    });
    expect(body.raw).toEqual(raw);
    expect(body).not.toHaveProperty('decoded');
  });

  it('leaves out decoded for a log that only shares the topic', () => {
    expect(decodeTokenLog([TRANSFER_TOPIC, topicOf(A), topicOf(B)], '0x01')).toBeUndefined();
    const body = buildPayload({
      webhookId: 'wh_1',
      eventId: 'ev_1',
      type: 'address_activity',
      network: 'R',
      phase: 'confirmed',
      block,
      activity: txActivity({ hash: TX, from: A, to: null }),
    });
    expect(body).not.toHaveProperty('decoded');
    expect(body.confirmed).toBe(true);
  });
});
