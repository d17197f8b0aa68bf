import { randomKey, SubmissionKeys } from './submission-keys';

describe('SubmissionKeys', () => {
  const counter = () => {
    let n = 0;
    return new SubmissionKeys(() => `key-${++n}`);
  };

  it('sends nothing while a submission is in flight (a double click buys once)', () => {
    const keys = counter();
    expect(keys.begin('{"cu":1000}')).toBe('key-1');
    expect(keys.begin('{"cu":1000}')).toBeUndefined();
    expect(keys.begin('{"cu":2000}')).toBeUndefined();
  });

  it('keeps the key after a failure while the values stay the same', () => {
    const keys = counter();
    expect(keys.begin('{"cu":1000}')).toBe('key-1');
    keys.settled(false);
    expect(keys.begin('{"cu":1000}')).toBe('key-1');
  });

  it('makes a new key when the values change', () => {
    const keys = counter();
    keys.begin('{"cu":1000}');
    keys.settled(false);
    expect(keys.begin('{"cu":2000}')).toBe('key-2');
  });

  it('makes a new key after a success: the next press with the same values is a new purchase', () => {
    const keys = counter();
    keys.begin('{"cu":1000}');
    keys.settled(true);
    expect(keys.begin('{"cu":1000}')).toBe('key-2');
  });
});

describe('randomKey', () => {
  it('is a version 4 UUID, also where crypto.randomUUID is missing (plain http)', () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(randomKey()).toMatch(uuid);
    const original = crypto.randomUUID;
    Object.defineProperty(crypto, 'randomUUID', { value: undefined, configurable: true });
    try {
      const a = randomKey();
      expect(a).toMatch(uuid);
      expect(randomKey()).not.toBe(a);
    } finally {
      Object.defineProperty(crypto, 'randomUUID', { value: original, configurable: true });
    }
  });
});
