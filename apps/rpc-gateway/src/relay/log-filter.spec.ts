import { invalidParams } from './gateway-errors';
import { checkLogFilter } from './log-filter';

const ADDRESS = `0x${'12'.repeat(20)}`;
const TOPIC = `0x${'cd'.repeat(32)}`;
const HASH = `0x${'ab'.repeat(32)}`;
const NOT_AN_OBJECT = invalidParams('eth_getLogs takes one filter object');
const check = (filter: unknown) => checkLogFilter(filter, NOT_AN_OBJECT);

/**
 * Each form here was sent to anvil 1.7 (the answer noted where geth's filter parsing differs):
 * what either node takes passes, what both refuse is refused before any node is asked.
 */
describe('checkLogFilter (eth_getLogs, eth_newFilter, eth_subscribe logs)', () => {
  it.each([
    ['nothing', {}],
    ['one address', { address: ADDRESS }],
    ['a list of addresses, either case', { address: [ADDRESS, `0x${'AB'.repeat(20)}`] }],
    ['an empty address list', { address: [] }],
    ['null address and topics', { address: null, topics: null }],
    ['a null in the address list (anvil)', { address: [ADDRESS, null] }],
    ['an address without 0x (anvil)', { address: '12'.repeat(20) }],
    ['an address with 0X (geth)', { address: `0X${'12'.repeat(20)}` }],
    ['one topic', { topics: [TOPIC] }],
    ['null, nested and empty positions', { topics: [null, [TOPIC, null], TOPIC, []] }],
    ['four null positions', { topics: [null, null, null, null] }],
    ['a topic without 0x (anvil)', { topics: ['cd'.repeat(32)] }],
    ['a blockHash', { blockHash: HASH, address: ADDRESS }],
    ['a blockHash with null bounds', { blockHash: HASH, fromBlock: null, toBlock: null }],
    ['a null blockHash with bounds', { blockHash: null, fromBlock: '0x0' }],
    ['hex quantities', { fromBlock: '0x0', toBlock: '0x1f' }],
    ['leading zeros and capitals (anvil)', { fromBlock: '0x01', toBlock: '0xA' }],
    ['a 0X quantity', { fromBlock: '0X1' }],
    ['every tag', { fromBlock: 'earliest', toBlock: 'latest' }],
    ['safe..finalized', { fromBlock: 'safe', toBlock: 'finalized' }],
    ['pending', { fromBlock: 'pending', toBlock: 'pending' }],
    ['tags in capitals (anvil)', { fromBlock: 'EARLIEST', toBlock: 'Latest' }],
    ['a field we do not know (geth ignores it)', { extra: 1 }],
  ])('%s passes', (_name, filter) => {
    expect(check(filter)).toBeNull();
  });

  it.each([
    ['null', null, 'eth_getLogs takes one filter object'],
    ['a string', ADDRESS, 'eth_getLogs takes one filter object'],
    ['a list', [{}], 'eth_getLogs takes one filter object'],
    [
      'an address too short',
      { address: '0x12' },
      'log filter address "0x12" is not a 20-byte address in hex (0x and 40 hex digits) or a list of them',
    ],
    [
      'an address too long',
      { address: `${ADDRESS}00` },
      `log filter address "${ADDRESS}00" is not a 20-byte address`,
    ],
    ['an address not hex', { address: 'nope' }, 'log filter address "nope" is not'],
    ['an empty address', { address: '' }, 'log filter address "" is not'],
    ['an address as a number', { address: 5 }, 'log filter address 5 is not'],
    ['an address as an object', { address: {} }, 'log filter address an object is not'],
    [
      'a bad address in a list',
      { address: [ADDRESS, '0x12'] },
      'log filter address[1] "0x12" is not a 20-byte address in hex (0x and 40 hex digits) or null',
    ],
    ['a nested address list', { address: [[ADDRESS]] }, 'log filter address[0] a list is not'],
    ['topics as a string', { topics: TOPIC }, 'log filter topics is a list of at most 4 positions'],
    ['topics as an object', { topics: {} }, 'log filter topics is a list of at most 4 positions'],
    [
      'five topic positions',
      { topics: [TOPIC, null, null, null, null] },
      'log filter topics has 5 positions; a log has at most 4',
    ],
    [
      'a topic too short',
      { topics: [null, '0x12'] },
      'log filter topics[1] "0x12" is not null, a 32-byte topic in hex (0x and 64 hex digits) or a list of those',
    ],
    ['a topic as a number', { topics: [5] }, 'log filter topics[0] 5 is not null'],
    [
      'a bad topic in a position list',
      { topics: [[TOPIC, '0xzz']] },
      'log filter topics[0][1] "0xzz" is not a 32-byte topic in hex (0x and 64 hex digits) or null',
    ],
    [
      'a bad topic after a null (geth stops reading at the null; anvil refuses)',
      { topics: [[null, '0xzz']] },
      'log filter topics[0][1] "0xzz"',
    ],
    ['a list two levels deep', { topics: [[[TOPIC]]] }, 'log filter topics[0][0] a list is not'],
    [
      'fromBlock garbage',
      { fromBlock: 'garbage' },
      'log filter fromBlock "garbage" is not a block number in hex (0x…) or one of earliest, latest, safe, finalized, pending',
    ],
    ['fromBlock decimal', { fromBlock: '1' }, 'log filter fromBlock "1" is not'],
    ['fromBlock a JSON number', { fromBlock: 1 }, 'log filter fromBlock 1 is not'],
    ['fromBlock 0x alone', { fromBlock: '0x' }, 'log filter fromBlock "0x" is not'],
    ['fromBlock with a space', { fromBlock: ' 0x0' }, 'log filter fromBlock " 0x0" is not'],
    ['toBlock an object', { toBlock: { blockNumber: '0x0' } }, 'log filter toBlock an object'],
    ['toBlock an unknown tag', { toBlock: 'genesis' }, 'log filter toBlock "genesis" is not'],
    [
      'a blockHash too short',
      { blockHash: '0x12' },
      'log filter blockHash "0x12" is not a 32-byte block hash in hex (0x and 64 hex digits)',
    ],
    [
      'blockHash and toBlock',
      { blockHash: HASH, toBlock: 'latest' },
      'a log filter takes blockHash or fromBlock/toBlock, not both',
    ],
  ])('%s is invalid params', (_name, filter, message) => {
    const error = check(filter);
    expect(error).toMatchObject({ code: 'invalid_params', kind: 'invalid' });
    expect(error?.message).toContain(`invalid params: ${message}`);
  });

  it('a long bad value is quoted cut, the message bounded', () => {
    const message = check({ address: 'x'.repeat(1_000_000) })?.message ?? '';
    expect(message).toContain('(1000000 characters)');
    expect(message.length).toBeLessThan(300);
  });
});
