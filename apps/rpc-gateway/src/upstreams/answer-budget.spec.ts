import { AnswerBudget, AnswersInFlight, EXEMPT_ANSWER_BYTES } from './answer-budget';

const MIB = 1024 * 1024;

describe("AnswersInFlight: the worker's budget of answer bytes in flight (ADR 0215 amendment)", () => {
  it('a body is not counted until it passes 1 MiB; past it, all of it is held', () => {
    const inFlight = new AnswersInFlight(4 * MIB);
    const read = inFlight.read();
    expect(read.grow(EXEMPT_ANSWER_BYTES)).toBe(true);
    expect(inFlight.bytes).toBe(0);
    expect(read.grow(1)).toBe(true);
    expect(inFlight.bytes).toBe(MIB + 1);
    read.release();
    expect(inFlight.bytes).toBe(0);
  });

  it('a read that would pass the budget is refused and holds nothing more', () => {
    const inFlight = new AnswersInFlight(4 * MIB);
    const first = inFlight.read();
    expect(first.grow(3 * MIB)).toBe(true);
    const second = inFlight.read();
    expect(second.grow(MIB)).toBe(true);
    expect(second.grow(MIB)).toBe(false);
    expect(inFlight.bytes).toBe(3 * MIB);
    second.release();
    first.release();
    first.release();
    expect(inFlight.bytes).toBe(0);
  });

  it('small answers are never refused, however full the budget is', () => {
    const inFlight = new AnswersInFlight(4 * MIB);
    const big = inFlight.read();
    expect(big.grow(4 * MIB)).toBe(true);
    expect(inFlight.bytes).toBe(4 * MIB);
    for (let i = 0; i < 100; i++) {
      const small = inFlight.read();
      expect(small.grow(512 * 1024)).toBe(true);
      expect(small.grow(512 * 1024)).toBe(true);
      small.release();
    }
    big.release();
    expect(inFlight.bytes).toBe(0);
  });

  it("a request's kept answers are held past its first 1 MiB, until it is released", () => {
    const inFlight = new AnswersInFlight(4 * MIB);
    const budget = new AnswerBudget(32 * MIB, inFlight);
    expect(budget.keep(MIB)).toBe(true);
    expect(inFlight.bytes).toBe(0);
    // Kept answers were read within the budget already: held, never refused here.
    expect(budget.keep(5 * MIB)).toBe(true);
    expect(inFlight.bytes).toBe(6 * MIB);
    // Over the request's own limit: not kept, nothing held.
    expect(budget.keep(30 * MIB)).toBe(false);
    expect(inFlight.bytes).toBe(6 * MIB);
    budget.release();
    budget.release();
    expect(inFlight.bytes).toBe(0);
    expect(budget.left).toBe(26 * MIB);
  });

  it('without a worker budget nothing is held (MAX_RESPONSE_BYTES alone)', () => {
    const budget = new AnswerBudget(32 * MIB);
    expect(budget.read()).toBeUndefined();
    expect(budget.keep(10 * MIB)).toBe(true);
    budget.release();
  });
});
