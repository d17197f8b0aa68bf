/** The part of an OpenAPI 3.1 document these helpers read. */
export interface OpenApiPaths {
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/** A request a REST app must answer 405 with `allow` (sorted): a method its path lacks. */
export interface MethodNotAllowedCase {
  readonly method: string;
  readonly path: string;
  readonly allow: readonly string[];
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** An OpenAPI path template as a pattern of concrete paths (`{id}`: one segment). */
const patternOf = (template: string) => new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);

/**
 * Every documented path (its parameters filled with `x1`) under every method no documented
 * route of that path takes, with the methods the routes that match it do take (HEAD with GET).
 * Every template matching the path counts: `DELETE /webhooks/{id}` routes `DELETE
 * /webhooks/limits` too, so DELETE is allowed there (ADR 0502: 405 with Allow).
 */
export function methodNotAllowedCases(doc: OpenApiPaths): MethodNotAllowedCase[] {
  const templates = Object.entries(doc.paths).map(([template, operations]) => ({
    template,
    pattern: patternOf(template),
    own: Object.keys(operations).map((m) => m.toUpperCase()),
  }));
  return templates.flatMap(({ template }) => {
    const path = template.replace(/\{[^}]+\}/g, 'x1');
    const routed = templates.filter((t) => t.pattern.test(path)).flatMap((t) => t.own);
    const allow = [...new Set(routed.includes('GET') ? [...routed, 'HEAD'] : routed)].sort();
    return METHODS.filter((m) => !routed.includes(m)).map((method) => ({ method, path, allow }));
  });
}

/** What an app answered to a request: its status, `Allow` header and error code. */
export interface MethodAnswer {
  readonly status: number;
  readonly allow: string | null | undefined;
  readonly error: unknown;
}

/**
 * Asks every `methodNotAllowedCases` request of `doc` and answers those not answered 405
 * `method_not_allowed` with the expected `Allow` (empty when every one was): a spec expects `[]`.
 */
export async function methodNotAllowedMismatches(
  doc: OpenApiPaths,
  ask: (method: string, path: string) => Promise<MethodAnswer>,
): Promise<{ method: string; path: string; expected: string; got: string }[]> {
  const mismatches = [];
  for (const { method, path, allow } of methodNotAllowedCases(doc)) {
    const answer = await ask(method, path);
    const got = `${answer.status} ${String(answer.error)} ${String(answer.allow).split(', ').sort().join(', ')}`;
    const expected = `405 method_not_allowed ${allow.join(', ')}`;
    if (got !== expected) mismatches.push({ method, path, expected, got });
  }
  return mismatches;
}
