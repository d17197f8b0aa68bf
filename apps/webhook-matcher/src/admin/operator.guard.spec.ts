import type { ExecutionContext } from '@nestjs/common';
import type { AppConfig } from '../config/config';
import { OperatorGuard } from './operator.guard';

const contextWith = (authorization?: string) =>
  ({
    switchToHttp: () => ({ getRequest: () => ({ headers: { authorization } }) }),
  }) as unknown as ExecutionContext;

describe('OperatorGuard', () => {
  const token = 'an-operator-token-of-some-length';

  it('lets the operator token through and refuses anything else', () => {
    const guard = new OperatorGuard({ OPERATOR_TOKEN: token } as AppConfig);
    expect(guard.canActivate(contextWith(`Bearer ${token}`))).toBe(true);
    for (const header of [undefined, `Bearer ${token}x`, `Basic ${token}`, 'Bearer ', token])
      expect(() => guard.canActivate(contextWith(header))).toThrow(
        expect.objectContaining({ code: 'unauthorized' }),
      );
  });

  it('also lets the previous token through while it is rotated', () => {
    const previous = 'the-previous-operator-token';
    const guard = new OperatorGuard({
      OPERATOR_TOKEN: token,
      OPERATOR_TOKEN_PREVIOUS: previous,
    } as AppConfig);
    expect(guard.canActivate(contextWith(`Bearer ${token}`))).toBe(true);
    expect(guard.canActivate(contextWith(`Bearer ${previous}`))).toBe(true);
    expect(() => guard.canActivate(contextWith('Bearer some-other-token-entirely'))).toThrow(
      expect.objectContaining({ code: 'unauthorized' }),
    );
  });

  it('refuses everyone when no OPERATOR_TOKEN is configured (a previous one alone opens nothing)', () => {
    const guard = new OperatorGuard({
      OPERATOR_TOKEN_PREVIOUS: 'the-previous-operator-token',
    } as AppConfig);
    for (const header of [undefined, 'Bearer ', 'Bearer the-previous-operator-token'])
      expect(() => guard.canActivate(contextWith(header))).toThrow(
        expect.objectContaining({ code: 'unauthorized' }),
      );
    const none = new OperatorGuard({} as AppConfig);
    for (const header of [undefined, 'Bearer ', `Bearer ${token}`])
      expect(() => none.canActivate(contextWith(header))).toThrow(
        expect.objectContaining({ code: 'unauthorized' }),
      );
  });
});
