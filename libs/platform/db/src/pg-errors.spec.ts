import { isDataException } from './pg-errors';

describe('isDataException', () => {
  it('knows a data exception by its SQLSTATE, on the error or on the driver error it wraps', () => {
    expect(isDataException({ code: '22003' })).toBe(true);
    expect(isDataException({ driverError: { code: '22P02' } })).toBe(true);
    expect(isDataException({ code: '23505' })).toBe(false);
    expect(isDataException({ code: '40001' })).toBe(false);
    expect(isDataException({ code: 22003 })).toBe(false);
    expect(isDataException(new Error('22008'))).toBe(false);
    expect(isDataException(undefined)).toBe(false);
  });
});
