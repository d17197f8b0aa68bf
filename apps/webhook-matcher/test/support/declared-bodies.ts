import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';

type Json = Record<string, unknown>;

/** One request a route accepted (2xx), as a test sent it. */
export interface AcceptedRequest {
  method: string;
  /** The full path as served (`/api/v1/webhooks/wh_…`), query string stripped. */
  path: string;
  body: unknown;
}

/**
 * The requests whose body the document does not declare: the OpenAPI path of each is found
 * from its concrete path, and its body validated with ajv against the operation's requestBody
 * schema (its references resolved as the document's: `#/$defs/…` inside a schema with its own
 * `$id`, `#/components/…` against the document's components). A route declared without a body
 * (`noBody`) declares only "no body", so a body sent there is listed unless it is `{}`, which
 * those routes take as no body. An empty list means the document accepts what the route did.
 */
export function undeclaredBodies(document: Json, accepted: readonly AcceptedRequest[]): string[] {
  const paths = document['paths'] as Record<string, Record<string, Json>>;
  const templates = Object.keys(paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));
  const validators = new Map<string, ValidateFunction>();
  const out: string[] = [];
  for (const request of accepted) {
    const method = request.method.toLowerCase();
    const path = request.path.split('?')[0]!;
    const template = templates.find(
      (t) => t.pattern.test(path) && paths[t.template]![method] !== undefined,
    )?.template;
    const label = `${request.method} ${path} ${JSON.stringify(request.body)?.slice(0, 300)}`;
    if (template === undefined) {
      out.push(`${label}: no operation`);
      continue;
    }
    const operation = paths[template]![method]!;
    if (!operation['requestBody']) {
      const empty =
        request.body === undefined ||
        (typeof request.body === 'object' &&
          request.body !== null &&
          Object.keys(request.body).length === 0);
      if (!empty) out.push(`${label}: the operation declares no body`);
      continue;
    }
    if (request.body === undefined) {
      if ((operation['requestBody'] as Json)['required'] === true)
        out.push(`${label}: no body, but the document requires one`);
      continue;
    }
    const key = `${method} ${template}`;
    let validate = validators.get(key);
    if (!validate) {
      const content = (operation['requestBody'] as { content: Record<string, { schema: Json }> })
        .content;
      // One ajv per schema: a schema's `$id` may be met again in another operation's.
      const ajv = new Ajv2020({ strict: false, validateFormats: false });
      validate = ajv.compile({
        ...content['application/json']!.schema,
        components: document['components'],
      });
      validators.set(key, validate);
    }
    if (!validate(request.body)) out.push(`${label}: ${new Ajv2020().errorsText(validate.errors)}`);
  }
  return out;
}
