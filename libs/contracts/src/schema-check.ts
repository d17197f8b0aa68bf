import type { z } from 'zod';

/**
 * A check compiled from a zod schema for the hot path of a consumer (ADR 0104): it answers true
 * only for a value the schema accepts AND returns unchanged (no key it would strip, no default,
 * no transform), so the value itself can stand for `schema.parse(value)`, without zod building
 * a copy of it. Anything else answers false, and the caller asks the schema, which stays the one
 * source of the rule and of the reason for a rejection. Only the schema kinds and checks the
 * flush contract uses are compiled (object with required or optional keys, array, string,
 * number, literal, discriminated union; length, regex and datetime formats, safe integers,
 * bounds, refinements); a schema with anything else compiles to `undefined` (no shortcut).
 */
export type CompiledCheck = (value: unknown) => boolean;

type Check = (value: never) => boolean;

interface Def {
  type: string;
  checks?: Array<{ _zod: { def: CheckDef } }>;
  [key: string]: unknown;
}

interface CheckDef {
  check: string;
  format?: string;
  pattern?: RegExp;
  value?: number;
  minimum?: number;
  maximum?: number;
  inclusive?: boolean;
  fn?: (value: unknown) => unknown;
  abort?: boolean;
  when?: unknown;
}

class Unsupported extends Error {}

export function compileSchemaCheck(schema: z.ZodType): CompiledCheck | undefined {
  try {
    return compile(schema) as CompiledCheck;
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}

function defOf(schema: unknown): Def {
  return (schema as { _zod: { def: Def } })._zod.def;
}

function compile(schema: unknown): Check {
  const def = defOf(schema);
  const checks = (def.checks ?? []).map((c) => compileCheck(c._zod.def));
  const base = compileType(def);
  if (checks.length === 0) return base;
  return (value: never) => {
    if (!base(value)) return false;
    for (const check of checks) if (!check(value)) return false;
    return true;
  };
}

function compileType(def: Def): Check {
  switch (def.type) {
    case 'string': {
      // A string format (z.iso.datetime()) carries its pattern on the schema itself.
      const pattern = def['format'] !== undefined ? regex(def['pattern']) : undefined;
      return (value: never) =>
        typeof value === 'string' && (pattern === undefined || test(pattern, value));
    }
    case 'number':
      if (def['coerce']) throw new Unsupported('coerce');
      return (value: never) => typeof value === 'number' && Number.isFinite(value);
    case 'literal': {
      const values = def['values'] as unknown[];
      return (value: never) => values.includes(value);
    }
    case 'array': {
      const element = compile(def['element']);
      return (value: never) => {
        if (!Array.isArray(value)) return false;
        for (const item of value as unknown[]) if (!element(item as never)) return false;
        return true;
      };
    }
    case 'object': {
      if (def['catchall'] !== undefined) throw new Unsupported('catchall');
      const shape = new Map<string, { check: Check; optional: boolean }>();
      for (const [key, field] of Object.entries(def['shape'] as Record<string, unknown>)) {
        const fieldDef = defOf(field);
        // An optional key is absent or holds what its inner schema accepts: zod returns either
        // unchanged. Default, nullable, … may change what a missing key becomes: not compiled.
        const optional = fieldDef.type === 'optional';
        const inner = optional ? fieldDef['innerType'] : field;
        const innerType = defOf(inner).type;
        if (!['string', 'number', 'literal', 'array', 'object', 'union'].includes(innerType))
          throw new Unsupported(innerType);
        shape.set(key, { check: compile(inner), optional });
      }
      const required = [...shape.values()].filter((f) => !f.optional).length;
      return (value: never) => {
        if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
        const record = value as Record<string, unknown>;
        let present = 0;
        for (const key in record) {
          // An inherited or extra key (the schema would strip it): ask the schema.
          if (!Object.prototype.hasOwnProperty.call(record, key)) return false;
          const field = shape.get(key);
          if (field === undefined) return false;
          if (!field.optional) present += 1;
          else if (record[key] !== undefined && !field.check(record[key] as never)) return false;
        }
        if (present !== required) return false;
        for (const [key, field] of shape)
          if (!field.optional && !field.check(record[key] as never)) return false;
        return true;
      };
    }
    case 'union': {
      const discriminator = def['discriminator'];
      if (typeof discriminator !== 'string') throw new Unsupported('union');
      const options = new Map<unknown, Check>();
      for (const option of def['options'] as unknown[]) {
        const optionDef = defOf(option);
        const tag =
          optionDef.type === 'object'
            ? (optionDef['shape'] as Record<string, unknown>)[discriminator]
            : undefined;
        if (tag === undefined || defOf(tag).type !== 'literal')
          throw new Unsupported('union option');
        const check = compile(option);
        for (const literal of defOf(tag)['values'] as unknown[]) options.set(literal, check);
      }
      return (value: never) => {
        if (typeof value !== 'object' || value === null) return false;
        const check = options.get((value as Record<string, unknown>)[discriminator]);
        return check !== undefined && check(value);
      };
    }
    default:
      throw new Unsupported(def.type);
  }
}

function compileCheck(def: CheckDef): Check {
  // `when` only lets zod skip a check (after earlier issues); running every check regardless can
  // only make this stricter than the schema, never looser.
  switch (def.check) {
    case 'min_length': {
      const minimum = def.minimum!;
      return (value: never) => (value as { length: number }).length >= minimum;
    }
    case 'max_length': {
      const maximum = def.maximum!;
      return (value: never) => (value as { length: number }).length <= maximum;
    }
    case 'string_format': {
      if (def.format !== 'regex') throw new Unsupported(`format ${def.format}`);
      const pattern = regex(def.pattern);
      return (value: never) => test(pattern, value as string);
    }
    case 'number_format': {
      if (def.format !== 'safeint') throw new Unsupported(`format ${def.format}`);
      return (value: never) => Number.isSafeInteger(value);
    }
    case 'greater_than': {
      const bound = def.value!;
      return def.inclusive
        ? (value: never) => (value as number) >= bound
        : (value: never) => (value as number) > bound;
    }
    case 'less_than': {
      const bound = def.value!;
      return def.inclusive
        ? (value: never) => (value as number) <= bound
        : (value: never) => (value as number) < bound;
    }
    case 'custom': {
      const fn = def.fn!;
      // A refinement: true accepts (a promise or anything else: ask the schema).
      return (value: never) => fn(value) === true;
    }
    default:
      throw new Unsupported(def.check);
  }
}

function regex(pattern: unknown): RegExp {
  if (!(pattern instanceof RegExp)) throw new Unsupported('pattern');
  return pattern;
}

function test(pattern: RegExp, value: string): boolean {
  pattern.lastIndex = 0;
  return pattern.test(value);
}
