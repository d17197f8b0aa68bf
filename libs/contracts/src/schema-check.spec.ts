import fc from 'fast-check';
import { z } from 'zod';
import { Events } from './events';
import {
  compactFlush,
  usageFlushId,
  UsageFlushedSchema,
  UsageFlushedV2Schema,
  type UsageFlushed,
} from './events/billing.events';
import { compileSchemaCheck } from './schema-check';

const accepts = Events.usageFlushed.accepts!;

function part(over: Partial<UsageFlushed> = {}): UsageFlushed {
  const windowStart = over.windowStart ?? '2026-01-01T00:00:00.000Z';
  const producerId = over.producerId ?? 'gw-1';
  const p = over.part ?? 0;
  return {
    id: usageFlushId(producerId, windowStart, p),
    producerId,
    windowStart,
    windowEnd: '2026-01-01T00:00:01.000Z',
    part: p,
    parts: 2,
    accounts: [
      {
        kind: 'node',
        accountId: 'acc_1',
        items: [
          { network: 'eth-mainnet', method: 'eth_call', calls: 3, cu: 60 },
          { network: 'polygon-mainnet', method: 'debug_traceTransaction', calls: 1, cu: 309 },
        ],
        totalCu: 369,
      },
      {
        kind: 'webhook_delivery',
        accountId: 'acc_1',
        items: [{ webhookId: 'wh_1', attempts: 2, cu: 50 }],
        totalCu: 50,
      },
      {
        kind: 'node',
        accountId: 'acc-2',
        items: [
          { network: 'sui-mainnet', method: 'suix_getLatestSuiSystemState', calls: 1, cu: 20 },
        ],
        totalCu: 20,
      },
    ],
    ...over,
  };
}

/** What a wrong value in one place can be. */
const oddValues: unknown[] = [
  undefined,
  null,
  true,
  0,
  -1,
  1.5,
  2 ** 53,
  Number.MAX_SAFE_INTEGER,
  '',
  'x',
  'x y',
  'a'.repeat(129),
  'a'.repeat(128),
  '2026-02-30T00:00:00Z',
  '2026-01-01T00:00:00+01:00',
  '2026-01-01T00:00:00Z',
  'node',
  'webhook_delivery',
  'eth-mainnet',
  [],
  [{}],
  {},
  { kind: 'node' },
];

type Path = Array<string | number>;

/** Every path to a value inside `value` (objects and arrays walked). */
function pathsOf(value: unknown, prefix: Path = []): Path[] {
  const out: Path[] = [prefix];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...pathsOf(v, [...prefix, i])));
  else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) out.push(...pathsOf(v, [...prefix, k]));
  return out;
}

function mutate(
  root: unknown,
  path: Path,
  how: { op: 'set' | 'delete' | 'extra'; value: unknown },
) {
  const copy = structuredClone(root) as Record<string | number, unknown>;
  if (path.length === 0) return how.op === 'set' ? how.value : copy;
  let parent: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (how.op === 'set') parent[last] = how.value;
  else if (how.op === 'delete') {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else {
    const target = parent[last];
    if (typeof target === 'object' && target !== null && !Array.isArray(target))
      (target as Record<string, unknown>)['extra'] = how.value;
    else if (Array.isArray(target)) target.push(structuredClone(target[0]));
  }
  return copy;
}

/** The rule: accepted by the compiled check ⇒ accepted by the schema, and returned unchanged. */
function agrees(
  value: unknown,
  check: (value: unknown) => boolean = accepts,
  schema: z.ZodType = UsageFlushedSchema,
): boolean {
  if (!check(value)) return true;
  const parsed = schema.safeParse(value);
  return parsed.success && JSON.stringify(parsed.data) === JSON.stringify(value);
}

/** Random mutations of `base` (1–3, anywhere in it): the compiled check never accepts more. */
function fuzz(base: unknown, check: (value: unknown) => boolean, schema: z.ZodType) {
  const paths = pathsOf(base);
  let accepted = 0;
  let rejected = 0;
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          path: fc.constantFrom(...paths),
          op: fc.constantFrom('set' as const, 'delete' as const, 'extra' as const),
          value: fc.oneof(fc.constantFrom(...oddValues), fc.anything()),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      (mutations) => {
        let value: unknown = base;
        for (const m of mutations)
          if (pathsOf(value).some((p) => JSON.stringify(p) === JSON.stringify(m.path)))
            value = mutate(value, m.path, m);
        if (check(value)) accepted += 1;
        else rejected += 1;
        return agrees(value, check, schema);
      },
    ),
    { numRuns: 5_000, seed: 1304 },
  );
  return { accepted, rejected };
}

describe('compileSchemaCheck (the usage flush part, ADR 0104)', () => {
  it('accepts valid parts as the schema returns them', () => {
    for (const valid of [part(), part({ part: 1 }), part({ producerId: 'gw_2-b' })]) {
      expect(UsageFlushedSchema.safeParse(valid)).toEqual({ success: true, data: valid });
      expect(accepts(JSON.parse(JSON.stringify(valid)))).toBe(true);
    }
  });

  it.each<[string, unknown]>([
    [
      'a total that is not the sum of the items',
      mutate(part(), ['accounts', 0, 'totalCu'], { op: 'set', value: 370 }),
    ],
    [
      'an account twice with the same kind',
      { ...part(), accounts: [...part().accounts, part().accounts[0]] },
    ],
    ['an id that is not <producer>:<window>:<part>', { ...part(), id: 'gw-1:other' }],
    ['a part beyond the parts', part({ part: 2 })],
    ['no accounts', { ...part(), accounts: [] }],
    ['no items', mutate(part(), ['accounts', 2, 'items'], { op: 'set', value: [] })],
    ['an unknown kind', mutate(part(), ['accounts', 2, 'kind'], { op: 'set', value: 'other' })],
    [
      'fractional CU',
      mutate(part(), ['accounts', 2, 'items', 0, 'cu'], { op: 'set', value: 20.5 }),
    ],
    [
      'a network that is no token',
      mutate(part(), ['accounts', 2, 'items', 0, 'network'], { op: 'set', value: 'eth mainnet' }),
    ],
    ['a window that is no UTC timestamp', { ...part(), windowEnd: '2026-01-01T00:00:01+01:00' }],
    ['a key the schema would strip', mutate(part(), ['accounts', 0], { op: 'extra', value: 1 })],
  ])('leaves %s to the schema', (_, value) => {
    expect(accepts(value)).toBe(false);
    expect(agrees(value)).toBe(true);
  });

  it('never accepts what the schema rejects or would change (mutations in every place)', () => {
    const { accepted, rejected } = fuzz(part(), accepts, UsageFlushedSchema);
    // Both sides were exercised.
    expect(accepted).toBeGreaterThan(50);
    expect(rejected).toBeGreaterThan(1_000);
  });

  it('compiles nothing for a schema with kinds it does not know (no shortcut, the schema decides)', () => {
    expect(compileSchemaCheck(z.object({ a: z.string().default('x') }))).toBeUndefined();
    expect(compileSchemaCheck(z.object({ a: z.string().nullable() }))).toBeUndefined();
    expect(compileSchemaCheck(z.object({ a: z.string().optional().nullable() }))).toBeUndefined();
    expect(compileSchemaCheck(z.strictObject({ a: z.string() }))).toBeUndefined();
    expect(compileSchemaCheck(z.object({ a: z.string().email() }))).toBeUndefined();
    expect(compileSchemaCheck(z.object({ a: z.coerce.number() }))).toBeUndefined();
    expect(
      compileSchemaCheck(z.object({ a: z.string().transform((s) => s.length) })),
    ).toBeUndefined();
    expect(compileSchemaCheck(z.object({ a: z.string() }))).toBeDefined();
  });

  it('compiles an optional key: absent, or present and accepted by its inner schema', () => {
    const schema = z.object({ a: z.string(), b: z.number().int().min(0).optional() });
    const check = compileSchemaCheck(schema)!;
    expect(check({ a: 'x' })).toBe(true);
    expect(check({ a: 'x', b: 3 })).toBe(true);
    expect(check({ a: 'x', b: -1 })).toBe(false);
    expect(check({ a: 'x', b: '3' })).toBe(false);
    expect(check({ b: 3 })).toBe(false);
    expect(check({ a: 'x', b: 3, c: 1 })).toBe(false);
    for (const value of [{ a: 'x' }, { a: 'x', b: 3 }, { a: 'x', b: undefined }])
      expect(agrees(value, check, schema)).toBe(true);
  });
});

describe('compileSchemaCheck (the compact usage flush part, ADR 0105)', () => {
  const acceptsV2 = Events.usageFlushedV2.accepts!;
  const compact = () => compactFlush(part());
  /** A part routed to a ledger partition, its keys in the schema's order (as zod returns them). */
  const routed = (ledgerPartition: number) => {
    const { lines, accounts, usage, totalCu, ...header } = compact();
    return { ...header, ledgerPartition, lines, accounts, usage, totalCu };
  };

  it('accepts valid compact parts as the schema returns them', () => {
    for (const valid of [compact(), compactFlush(part({ part: 1 })), routed(3)]) {
      expect(UsageFlushedV2Schema.safeParse(valid)).toEqual({ success: true, data: valid });
      expect(acceptsV2(JSON.parse(JSON.stringify(valid)))).toBe(true);
    }
  });

  it.each<[string, (p: ReturnType<typeof compact>) => unknown]>([
    ['rows that are not whole rows', (p) => ({ ...p, usage: p.usage.slice(0, -1) })],
    ['a line index out of range', (p) => ({ ...p, usage: [0, 9, 1, 369, ...p.usage.slice(4)] })],
    [
      'an account out of order (rows not account by account)',
      (p) => ({ ...p, usage: [...p.usage.slice(8), ...p.usage.slice(0, 8)] }),
    ],
    ['an account without rows', (p) => ({ ...p, accounts: [...p.accounts, 'acc_3'] })],
    ['a total that is not the sum of the rows', (p) => ({ ...p, totalCu: p.totalCu + 1 })],
    ['an account twice', (p) => ({ ...p, accounts: [p.accounts[0], p.accounts[0]] })],
    ['fractional calls', (p) => ({ ...p, usage: [0, 0, 1.5, ...p.usage.slice(3)] })],
    ['a ledger partition that is no index', (p) => ({ ...p, ledgerPartition: -1 })],
    [
      // ISO has a year 0000, Postgres has not: the part would fail its transaction every time.
      'a window of the year 0000',
      (p) => ({
        ...p,
        id: usageFlushId(p.producerId, '0000-01-01T00:00:00.000Z', p.part),
        windowStart: '0000-01-01T00:00:00.000Z',
        windowEnd: '0000-01-01T00:00:01.000Z',
      }),
    ],
    ['a ledger partition beyond the largest count', (p) => ({ ...p, ledgerPartition: 64 })],
    [
      'a line of an unknown kind',
      (p) => ({ ...p, lines: [{ kind: 'other' }, ...p.lines.slice(1)] }),
    ],
  ])('refuses %s, and leaves it to the schema', (_, change) => {
    const value = change(compact());
    expect(UsageFlushedV2Schema.safeParse(value).success).toBe(false);
    expect(acceptsV2(value)).toBe(false);
  });

  it('never accepts what the schema rejects or would change (mutations in every place)', () => {
    const { accepted, rejected } = fuzz(routed(1), acceptsV2, UsageFlushedV2Schema);
    expect(accepted).toBeGreaterThan(50);
    expect(rejected).toBeGreaterThan(1_000);
  });
});
