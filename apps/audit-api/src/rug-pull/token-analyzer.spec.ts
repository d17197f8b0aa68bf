import type { TradeFindings } from './risk-score';
import { worseTrade } from './token-analyzer';

const clean: TradeFindings = {
  buyOk: true,
  transferOk: true,
  sellOk: true,
  sellAllOk: true,
  buyTax: 0,
  sellTax: 0,
  transferTax: 0,
};

describe('worseTrade: what a wallet that is tx.origin and has no code meets', () => {
  it.each<[string, Partial<TradeFindings>, Partial<TradeFindings>, Partial<TradeFindings>]>([
    ['both clean', {}, {}, {}],
    [
      'a sale refused to one wallet is refused, and depends on the caller',
      { sellOk: false, sellAllOk: false },
      {},
      { sellOk: false, sellAllOk: false, callerDependent: true },
    ],
    [
      'a sale refused to both wallets is refused, whoever calls',
      { sellOk: false, sellAllOk: false },
      { sellOk: false, sellAllOk: false },
      { sellOk: false, sellAllOk: false },
    ],
    [
      'a buy refused to the other wallet is refused, and depends on the caller',
      {},
      { buyOk: false, buyTax: null },
      { buyOk: false, buyTax: 0, callerDependent: true },
    ],
    [
      'the higher tax counts; taxes apart depend on the caller',
      { sellTax: 0.02 },
      { sellTax: 0.6 },
      { sellTax: 0.6, callerDependent: true },
    ],
    [
      'taxes within rounding are the same trade',
      { sellTax: 0.05 },
      { sellTax: 0.055 },
      { sellTax: 0.055 },
    ],
    [
      'an unmeasured tax takes the measured one',
      { sellTax: null },
      { sellTax: 0.3 },
      { sellTax: 0.3 },
    ],
  ])('%s', (_name, a, b, expected) => {
    expect(worseTrade({ ...clean, ...a }, { ...clean, ...b })).toEqual({ ...clean, ...expected });
  });
});
