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

/**
 * A request that must be refused with an error the document declares for its operation: sent
 * without credentials (`scheme` null) to an operation that authenticates; with them (`scheme`
 * names the operation's security scheme) and a path parameter its schema refuses (`x1`), or an
 * undeclared query parameter, or a body with an undeclared field; and to an operation that takes
 * a body, a text/plain body (415) and a JSON body one byte over the limit its 413 names (413).
 */
export interface ErrorProbe {
  readonly method: string;
  /** Concrete path and query (`/api/v1/webhooks/x1?undeclared_parameter=1`). */
  readonly url: string;
  readonly scheme: string | null;
  /** The body to send as it is, or undefined for none. */
  readonly payload: string | undefined;
  /** The Content-Type to send with `payload` (`application/json` but for the 415 probe). */
  readonly contentType: string | undefined;
  readonly why: string;
}

interface OperationShape {
  security?: Record<string, unknown>[];
  parameters?: { name: string; in: string; schema?: { pattern?: string } }[];
  requestBody?: unknown;
  responses?: Record<string, { description?: string }>;
}

const FILLER = 'x1';

/** The body limit when the document names none (over createHttpApp's 5 MiB default). */
const OVERSIZE_FALLBACK = 8 * 1024 * 1024;

/** A JSON body one byte over the limit the operation's 413 names (`(N bytes)`), else 8 MiB. */
function oversizeBody(operation: OperationShape): string {
  const named = /\((\d+) bytes\)/.exec(operation.responses?.['413']?.description ?? '');
  const size = named ? Number(named[1]) + 1 : OVERSIZE_FALLBACK;
  const head = '{"undeclared_field":"';
  return `${head}${'x'.repeat(Math.max(0, size - head.length - 2))}"}`;
}

/** The probes of every operation of `doc` (see `ErrorProbe`). */
export function errorProbes(doc: OpenApiPaths): (ErrorProbe & { template: string })[] {
  const probes: (ErrorProbe & { template: string })[] = [];
  for (const [template, operations] of Object.entries(doc.paths))
    for (const [method, raw] of Object.entries(operations)) {
      if (!METHODS.includes(method.toUpperCase() as (typeof METHODS)[number])) continue;
      const operation = raw as OperationShape;
      const path = template.replace(/\{[^}]+\}/g, FILLER);
      const scheme = Object.keys(operation.security?.[0] ?? {})[0] ?? null;
      const body = operation.requestBody ? '{}' : undefined;
      const probe = (
        url: string,
        withScheme: string | null,
        sent: string | undefined,
        why: string,
        contentType = 'application/json',
      ) =>
        probes.push({
          template,
          method: method.toUpperCase(),
          url,
          scheme: withScheme,
          payload: sent,
          contentType: sent === undefined ? undefined : contentType,
          why,
        });
      const parameters = operation.parameters ?? [];
      if (scheme) probe(path, null, body, 'no credentials');
      const refused = parameters.filter(
        (p) => p.in === 'path' && p.schema?.pattern && !new RegExp(p.schema.pattern).test(FILLER),
      );
      if (refused.length)
        probe(path, scheme, body, `path ${refused.map((p) => p.name).join(', ')}`);
      if (parameters.some((p) => p.in === 'query'))
        probe(`${path}?undeclared_parameter=1`, scheme, body, 'an undeclared query parameter');
      if (operation.requestBody) {
        probe(path, scheme, '{"undeclared_field":1}', 'a body with an undeclared field');
        probe(path, scheme, '{}', 'a text/plain body', 'text/plain');
        probe(path, scheme, oversizeBody(operation), 'a body over the limit');
      }
    }
  return probes;
}

/** What an app answered a probe: its status and error code. */
export interface ErrorAnswer {
  readonly status: number;
  readonly error: unknown;
}

/**
 * Sends every `errorProbes` request of `doc` and lists those whose answer the document does not
 * declare: a status only `default` covers, or one whose description does not name the code
 * answered (each declared error status names its codes). A spec expects `[]`.
 */
export async function undeclaredErrorAnswers(
  doc: OpenApiPaths,
  ask: (probe: ErrorProbe) => Promise<ErrorAnswer>,
): Promise<string[]> {
  const out: string[] = [];
  for (const probe of errorProbes(doc)) {
    const answer = await ask(probe);
    const operation = doc.paths[probe.template]![probe.method.toLowerCase()] as OperationShape;
    const declared = operation.responses?.[String(answer.status)];
    const code = String(answer.error);
    const named =
      declared?.description !== undefined &&
      new RegExp(`(^|[^a-z_])${code}([^a-z_]|$)`).test(declared.description);
    if (!declared || !named)
      out.push(
        `${probe.method} ${probe.url} (${probe.why}): answered ${answer.status} ${code}, ` +
          (declared ? 'its description does not name the code' : 'a status not declared'),
      );
  }
  return out;
}
