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
