import { AnswerBudget } from './answer-budget';
import { CallCoalescer } from './call-coalescer';
import type { CallAnswer, OutCall } from './upstream-router';

const call = (name: string): OutCall => ({ method: name, params: [], paramsRaw: '[]' });
const answerTo = (c: OutCall): CallAnswer => ({ kind: 'result', resultText: `"${c.method}"` });
const endOfTurn = () => new Promise(setImmediate);
const budget = new AnswerBudget(32 * 1024 * 1024);

/** A fake upstream: records each exchange's methods and answers every call with its own name. */
function setup(maxCalls: number) {
  const exchanges: string[][] = [];
  const sizes: number[] = [];
  const coalescer = new CallCoalescer(
    async (calls) => {
      exchanges.push(calls.map((c) => c.method));
      return calls.map(answerTo);
    },
    maxCalls,
    (size) => sizes.push(size),
  );
  return { coalescer, exchanges, sizes };
}

const results = (answers: CallAnswer[]) =>
  answers.map((a) => (a.kind === 'result' ? a.resultText : a.kind));

describe('CallCoalescer', () => {
  it('sends nothing before the turn ends, then one exchange for every submission of the turn', async () => {
    const { coalescer, exchanges, sizes } = setup(20);
    const a = coalescer.submit([call('a')], budget);
    const b = coalescer.submit([call('b1'), call('b2')], budget);
    const c = coalescer.submit([call('c')], budget);
    expect(exchanges).toEqual([]);
    await endOfTurn();
    expect(exchanges).toEqual([['a', 'b1', 'b2', 'c']]);
    expect(sizes).toEqual([4]);
    expect(results(await a)).toEqual(['"a"']);
    expect(results(await b)).toEqual(['"b1"', '"b2"']);
    expect(results(await c)).toEqual(['"c"']);
  });

  it('a lone call is its own exchange of one', async () => {
    const { coalescer, exchanges } = setup(20);
    const a = coalescer.submit([call('a')], budget);
    await endOfTurn();
    expect(exchanges).toEqual([['a']]);
    expect(results(await a)).toEqual(['"a"']);
  });

  it('calls of different turns go in different exchanges', async () => {
    const { coalescer, exchanges } = setup(20);
    const a = coalescer.submit([call('a')], budget);
    await endOfTurn();
    const b = coalescer.submit([call('b')], budget);
    await endOfTurn();
    expect(exchanges).toEqual([['a'], ['b']]);
    expect(results([...(await a), ...(await b)])).toEqual(['"a"', '"b"']);
  });

  it('sends at once when the queue is full; the rest of the turn waits for its end', async () => {
    const { coalescer, exchanges } = setup(3);
    const first = [coalescer.submit([call('a')], budget), coalescer.submit([call('b')], budget)];
    expect(exchanges).toEqual([]);
    first.push(coalescer.submit([call('c')], budget));
    expect(exchanges).toEqual([['a', 'b', 'c']]);
    const d = coalescer.submit([call('d')], budget);
    expect(exchanges).toHaveLength(1);
    await endOfTurn();
    expect(exchanges).toEqual([['a', 'b', 'c'], ['d']]);
    expect((await Promise.all(first)).map(results)).toEqual([['"a"'], ['"b"'], ['"c"']]);
    expect(results(await d)).toEqual(['"d"']);
  });

  it('never splits a submission: one that does not fit sends the queue first', async () => {
    const { coalescer, exchanges } = setup(3);
    const a = coalescer.submit([call('a1'), call('a2')], budget);
    const b = coalescer.submit([call('b1'), call('b2')], budget);
    expect(exchanges).toEqual([['a1', 'a2']]);
    await endOfTurn();
    expect(exchanges).toEqual([
      ['a1', 'a2'],
      ['b1', 'b2'],
    ]);
    expect(results(await a)).toEqual(['"a1"', '"a2"']);
    expect(results(await b)).toEqual(['"b1"', '"b2"']);
  });

  it('a submission of the cap or more is sent alone at once and leaves the queue as it is', async () => {
    const { coalescer, exchanges, sizes } = setup(2);
    const a = coalescer.submit([call('a')], budget);
    const big = coalescer.submit([call('x'), call('y'), call('z')], budget);
    expect(exchanges).toEqual([['x', 'y', 'z']]);
    const b = coalescer.submit([call('b')], budget);
    expect(exchanges).toEqual([
      ['x', 'y', 'z'],
      ['a', 'b'],
    ]);
    expect(sizes).toEqual([3, 2]);
    expect(results(await big)).toEqual(['"x"', '"y"', '"z"']);
    expect(results([...(await a), ...(await b)])).toEqual(['"a"', '"b"']);
  });

  it('answers each caller in order even when exchanges finish out of order', async () => {
    const pending: (() => void)[] = [];
    const coalescer = new CallCoalescer(
      (calls) =>
        new Promise<CallAnswer[]>((resolve) => pending.push(() => resolve(calls.map(answerTo)))),
      2,
      () => undefined,
    );
    const first = [coalescer.submit([call('a')], budget), coalescer.submit([call('b')], budget)];
    const second = [coalescer.submit([call('c')], budget), coalescer.submit([call('d')], budget)];
    pending[1]!();
    expect((await Promise.all(second)).map(results)).toEqual([['"c"'], ['"d"']]);
    pending[0]!();
    expect((await Promise.all(first)).map(results)).toEqual([['"a"'], ['"b"']]);
  });

  it('a failed exchange fails every caller in it, and only those', async () => {
    let fail = true;
    const coalescer = new CallCoalescer(
      async (calls) => {
        if (fail) throw new Error('boom');
        return calls.map(answerTo);
      },
      20,
      () => undefined,
    );
    const a = coalescer.submit([call('a')], budget);
    const b = coalescer.submit([call('b')], budget);
    await endOfTurn();
    await expect(a).rejects.toThrow('boom');
    await expect(b).rejects.toThrow('boom');
    fail = false;
    const c = coalescer.submit([call('c')], budget);
    await endOfTurn();
    expect(results(await c)).toEqual(['"c"']);
  });
});
