import { configSchema } from '../config/config';
import { applyGcPolicy } from './gc-policy';

describe('applyGcPolicy', () => {
  it('sets V8 heap growing to the configured percent', () => {
    const flags: string[] = [];
    applyGcPolicy(300, (f) => flags.push(f));
    expect(flags).toEqual(['--heap-growing-percent=300']);
  });

  it('leaves V8 its own heuristics at 0', () => {
    const flags: string[] = [];
    applyGcPolicy(0, (f) => flags.push(f));
    expect(flags).toEqual([]);
  });

  it('is a flag this V8 accepts (the real setter does not throw)', () => {
    expect(() => applyGcPolicy(300)).not.toThrow();
  });
});

describe('HEAP_GROWING_PERCENT', () => {
  const parse = (env: Record<string, string>) =>
    configSchema.safeParse({ REGION: 'eu', HTTP_PORT: '8080', ...env });

  it('defaults to 300 and accepts 0', () => {
    expect(parse({}).data?.HEAP_GROWING_PERCENT).toBe(300);
    expect(parse({ HEAP_GROWING_PERCENT: '0' }).data?.HEAP_GROWING_PERCENT).toBe(0);
  });

  it('refuses negative or absurd values', () => {
    expect(parse({ HEAP_GROWING_PERCENT: '-1' }).success).toBe(false);
    expect(parse({ HEAP_GROWING_PERCENT: '5000' }).success).toBe(false);
  });
});
