/**
 * The errors Redocly's `recommended` rules find in an OpenAPI document (`no-unresolved-refs`,
 * `no-empty-servers`, the structural `spec` rules among them), one line each: what the tools
 * that generate clients from the document (openapi-typescript uses this resolver) stumble on.
 * Warnings (a tag without a description, no license) are left out.
 */
export async function openApiLintErrors(document: Record<string, unknown>): Promise<string[]> {
  const { createConfig, lintFromString } = await import('@redocly/openapi-core');
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({
    source: JSON.stringify(document),
    absoluteRef: 'openapi.json',
    config,
  });
  return problems
    .filter((problem) => problem.severity === 'error')
    .map(
      (problem) =>
        `${problem.ruleId}: ${problem.message} (${problem.location[0]?.pointer ?? 'document'})`,
    );
}
