import type { ExecutionContext } from '@nestjs/common';
import type { AppConfig } from '../config/config';
import { OperatorGuard } from './auth.guards';

const contextWith = (authorization?: string) =>
  ({
    switchToHttp: () => ({ getRequest: () => ({ headers: { authorization } }) }),
  }) as unknown as ExecutionContext;

describe('billing-ledger OperatorGuard', () => {
  const current = 'the-current-operator-token';
  const previous = 'the-previous-operator-token';
  const refused = expect.objectContaining({ code: 'unauthorized' });

  it('lets OPERATOR_TOKEN through and refuses anything else', () => {
    const guard = new OperatorGuard({ OPERATOR_TOKEN: current } as AppConfig);
    expect(guard.canActivate(contextWith(`Bearer ${current}`))).toBe(true);
    for (const header of [undefined, `Bearer ${previous}`, `Bearer ${current}x`, current])
      expect(() => guard.canActivate(contextWith(header))).toThrow(refused);
  });

  it('while the token is rotated, the previous one is accepted too', () => {
    const guard = new OperatorGuard({
      OPERATOR_TOKEN: current,
      OPERATOR_TOKEN_PREVIOUS: previous,
    } as AppConfig);
    expect(guard.canActivate(contextWith(`Bearer ${current}`))).toBe(true);
    expect(guard.canActivate(contextWith(`Bearer ${previous}`))).toBe(true);
    expect(() => guard.canActivate(contextWith('Bearer not-one-of-them-at-all'))).toThrow(refused);
  });
});
