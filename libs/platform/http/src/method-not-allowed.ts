import { HttpException } from '@nestjs/common';

/**
 * A request whose path is a route of the app, with a method that route does not have: 405 Method
 * Not Allowed with `Allow` naming the route's methods (RFC 9110 §15.5.6), in our error body
 * (`method_not_allowed`; httpAnswerOf sets the header). An unknown path stays 404.
 */
export class MethodNotAllowedError extends HttpException {
  constructor(
    readonly method: string,
    readonly allow: readonly string[],
  ) {
    super(
      { message: `${method} is not a method of this route; it allows ${allow.join(', ')}` },
      405,
    );
  }
}

/** What the rule needs of the router: fastify's own `findRoute` (a concrete path, matched). */
export interface RouteFinder {
  findRoute(options: { method: string; url: string }): {
    params?: Record<string, string | undefined>;
    searchParams?: unknown;
  } | null;
}

/**
 * The methods of the route at `url` (path and query, as received), asked of the app's own router
 * for every method any route of the app registered (`methods`; HEAD included, fastify adds it for
 * every GET), in RFC 9110 §9's order (PATCH after PUT), others after. So the rule follows whatever
 * routes the app registers, with the router's own matching (trailing slash, parameters, decoding).
 *
 * Not counted: a match only through a catch-all `*` (the dashboard's `GET /*` serves its page and
 * answers 404 itself for unknown /api paths: it says nothing about which paths exist), and the
 * router's answers for a URL it cannot read (a bad percent-encoding, a parameter over the length
 * limit: no `searchParams`), which are no route.
 */
export function allowedMethodsOf(
  router: RouteFinder,
  methods: Iterable<string>,
  url: string,
): string[] {
  const allowed: string[] = [];
  for (const method of methods) {
    const found = router.findRoute({ method, url });
    if (!found || found.searchParams === undefined) continue;
    if (found.params && '*' in found.params) continue;
    allowed.push(method);
  }
  return allowed.sort(byMethodOrder);
}

/** RFC 9110 §9's order with PATCH (RFC 5789) after PUT, then any other method alphabetically. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

function byMethodOrder(a: string, b: string): number {
  const [i, j] = [METHOD_ORDER.indexOf(a), METHOD_ORDER.indexOf(b)];
  if (i !== -1 && j !== -1) return i - j;
  if (i !== -1 || j !== -1) return i === -1 ? 1 : -1;
  return a < b ? -1 : a > b ? 1 : 0;
}
