import { z } from 'zod';
import { transportSettingsProblem } from './transport-settings';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    readonly problem: string,
  ) {
    super(`config error: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

/**
 * Validates environment variables against an app's schema. The first problem is reported as
 * one line naming the variable, so a misconfigured deployment says exactly what to fix.
 */
export function parseConfig<S extends z.ZodObject>(
  schema: S,
  env: Record<string, string | undefined> = process.env,
): z.infer<S> {
  const blank = blankNumberSetting(schema, env);
  if (blank !== undefined)
    throw new ConfigError(blank, 'is invalid: empty; give a number, or unset it for its default');
  const result = schema.safeParse(env);
  if (result.success) {
    // Settings checked together (a certificate and its key); each alone passed the schema.
    const problem = transportSettingsProblem(result.data);
    if (problem) throw new ConfigError(problem.variable, problem.problem);
    return result.data;
  }
  const issue = result.error.issues[0]!;
  const variable = issue.path.map(String).join('.') || '(environment)';
  const given = issue.path.length > 0 ? env[String(issue.path[0])] : undefined;
  // A rule of the app's own (`custom`) says why a missing variable is needed there.
  const missing = issue.code === 'custom' ? issue.message : 'is required';
  const problem = given === undefined ? missing : `is invalid: ${issue.message}`;
  throw new ConfigError(variable, problem);
}

/** For `main.ts`: parse or print the one line and exit with status 1. */
export function loadConfigOrExit<S extends z.ZodObject>(schema: S, env = process.env): z.infer<S> {
  try {
    return parseConfig(schema, env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** Wrappers whose inner schema decides what a value is (`.default(…)`, `.optional()`, …). */
const WRAPPERS = new Set(['default', 'prefault', 'optional', 'nullable', 'readonly', 'catch']);

/**
 * The first numeric setting set to a blank value (`LEDGER_TICK_MS=`, a template that rendered
 * nothing). `z.coerce.number()` reads "" and " " as 0, which for many settings means "never" or
 * "off" (QA: top-ups that never clear, a port chosen at random), so a blank number is refused
 * here, for every app's schema, instead of being read as 0. Blank strings keep their meaning
 * (a list set but empty).
 */
function blankNumberSetting(
  schema: z.ZodObject,
  env: Record<string, string | undefined>,
): string | undefined {
  for (const [name, field] of Object.entries(schema.shape)) {
    const value = env[name];
    if (value === undefined || value.trim() !== '') continue;
    if (readsNumber(field as z.core.$ZodType)) return name;
  }
  return undefined;
}

function readsNumber(field: z.core.$ZodType): boolean {
  let def = field._zod.def as { type: string; innerType?: z.core.$ZodType; in?: z.core.$ZodType };
  for (let depth = 0; depth < 10; depth += 1) {
    const inner = WRAPPERS.has(def.type) ? def.innerType : def.type === 'pipe' ? def.in : undefined;
    if (inner === undefined) break;
    def = inner._zod.def as typeof def;
  }
  return def.type === 'number' || def.type === 'bigint';
}
