type Json = Record<string, unknown>;

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

/**
 * Operations of a built document whose possible errors are not declared by status (only under
 * `default`, which a generated client cannot tell apart): an operation that authenticates
 * (a non-empty `security`) must declare its 401; one that validates a body or a query its 400;
 * one that checks a path parameter its 400 or 404 (billing-ledger answers a malformed id as an
 * unknown one); one that takes a body its 413 and 415 (the framework refuses a body over the
 * limit or not sent as JSON before the route runs: `bodyRefusals`). Each app's `openapi.spec.ts` expects none.
 */
export function operationsWithUndeclaredErrors(document: Json): string[] {
  const out: string[] = [];
  const paths = (document['paths'] ?? {}) as Record<string, Record<string, Json>>;
  for (const [path, operations] of Object.entries(paths))
    for (const [method, operation] of Object.entries(operations)) {
      if (!METHODS.includes(method)) continue;
      const declared = new Set(Object.keys((operation['responses'] ?? {}) as Json));
      const parameters = (operation['parameters'] ?? []) as Json[];
      const security = (operation['security'] ?? document['security'] ?? []) as Json[];
      const missing = [
        ...(security.length > 0 && !declared.has('401') ? ['401 (authenticates)'] : []),
        ...((operation['requestBody'] || parameters.some((p) => p['in'] === 'query')) &&
        !declared.has('400')
          ? ['400 (validates its body or query)']
          : []),
        ...(operation['requestBody'] && !(declared.has('413') && declared.has('415'))
          ? ['413 and 415 (takes a body)']
          : []),
        ...(parameters.some((p) => p['in'] === 'path') &&
        !declared.has('400') &&
        !declared.has('404')
          ? ['400 or 404 (checks its path parameters)']
          : []),
      ];
      if (missing.length) out.push(`${method.toUpperCase()} ${path}: ${missing.join(', ')}`);
    }
  return out;
}
