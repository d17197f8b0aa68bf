import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Which release and commit a process runs: on /metrics, /healthz and the start line. */
export interface BuildInfo {
  /** The root package.json's `version` (the release). */
  version: string;
  /** `MERIDIAN_COMMIT`, set by the image build (Dockerfile `ARG`), else "unknown". */
  commit: string;
}

export const UNKNOWN_COMMIT = 'unknown';

/** The repository's root package.json: the apps and libs run from source, in the image too. */
const ROOT_PACKAGE_JSON = join(__dirname, '..', '..', '..', '..', 'package.json');

let cached: BuildInfo | undefined;

/**
 * Read once per process. `MERIDIAN_COMMIT` is a fact of the image, not a setting an operator
 * chooses, so it is read here rather than in each app's config schema (which would take every
 * app's module wiring to carry one label); an empty or absent one is "unknown".
 */
export function buildInfo(): BuildInfo {
  cached ??= buildInfoOf(process.env, rootPackageJson());
  return cached;
}

/** The root package.json's text, or `{}` where a build moved the code away from it. */
function rootPackageJson(): string {
  try {
    return readFileSync(ROOT_PACKAGE_JSON, 'utf8');
  } catch {
    return '{}';
  }
}

/** The pure part of `buildInfo`, for tests: the environment and package.json's text. */
export function buildInfoOf(
  env: Readonly<Record<string, string | undefined>>,
  packageJson: string,
): BuildInfo {
  let version: unknown;
  try {
    version = (JSON.parse(packageJson) as { version?: unknown } | null)?.version;
  } catch {
    version = undefined;
  }
  const commit = env['MERIDIAN_COMMIT']?.trim();
  return {
    version: typeof version === 'string' && version !== '' ? version : 'unknown',
    commit: commit ? commit : UNKNOWN_COMMIT,
  };
}
