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

  it('refuses everyone when no OPERATOR_TOKEN is configured', () => {
    const guard = new OperatorGuard({} as AppConfig);
    for (const header of [undefined, 'Bearer ', `Bearer ${token}`])
      expect(() => guard.canActivate(contextWith(header))).toThrow(
        expect.objectContaining({ code: 'unauthorized' }),
      );
  });
});
