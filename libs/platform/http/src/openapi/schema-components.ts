type JsonSchema = Record<string, unknown>;

const DEFS = '#/$defs/';
const COMPONENT = '#/components/schemas/';

/** A component name OpenAPI accepts (`^[a-zA-Z0-9._-]+$`), PascalCase when made from a key. */
const pascal = (text: string) =>
  text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('');

const sanitize = (name: string) => name.replace(/[^A-Za-z0-9._-]/g, '_');

/** zod's name for a definition it had to make up (a recursive schema without an `id`). */
const isMadeUp = (name: string) => /^__schema\d+$/.test(name);

/** Every `$ref` in `value`, rewritten by `rewrite` (a new tree; the input is not changed). */
function mapRefs(value: unknown, rewrite: (ref: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => mapRefs(item, rewrite));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      key === '$ref' && typeof item === 'string' ? rewrite(item) : mapRefs(item, rewrite),
    ]),
  );
}

/** The property key closest above the first `$ref` to `target` (`filters` for the filter tree). */
function keyAbove(value: unknown, target: string, key?: string): string | undefined {
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = keyAbove(item, target, key);
      if (found) return found;
    }
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const record = value as JsonSchema;
  if (record['$ref'] === target) return key;
  for (const [name, item] of Object.entries(record)) {
    if (name === '$defs') continue;
    // Under `properties` the keys are the object's own; elsewhere keep the nearest one above.
    const found =
      name === 'properties' && item && typeof item === 'object'
        ? Object.entries(item as JsonSchema)
            .map(([property, schema]) => keyAbove(schema, target, property))
            .find(Boolean)
        : keyAbove(item, target, key);
    if (found) return found;
  }
  return undefined;
}

/** The local reference a definition is reached by (JSON Pointer escaping of its name). */
const pointerTo = (name: string) => `${DEFS}${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/**
 * The document's `components/schemas`, filled from zod's JSON Schema output. zod puts recursive
 * and `id`-named subschemas under the schema's own `$defs` and points at them with `#/$defs/…`
 * (or `#` for the schema itself); valid JSON Schema 2020-12, but OpenAPI tooling resolves a
 * `$ref` against the document's root (openapi-typescript, Redocly: no-unresolved-refs). So each
 * definition moves here under a stable name (its zod `id`, else the property that holds it, else
 * the context's), every reference is rewritten to `#/components/schemas/<name>`, an `$id` that
 * only served those local references is dropped, and a definition identical to one already here
 * is not added twice (the webhook's filter tree of every operation is one component).
 */
export class SchemaComponents {
  readonly schemas: Record<string, JsonSchema> = {};
  /** Each component's content with its references to itself as `#self` (a recursive one too). */
  private readonly canonical = new Map<string, string>();

  /**
   * `schema` (zod's output for one body, query, header or answer) with its `$defs` moved into
   * the components. `context` names a definition that has no better name (`Webhooks.create`);
   * `io` says which side it describes (a request's definition that differs from an answer's of
   * the same name is `<name>Input`).
   */
  add(schema: JsonSchema, context: string, io: 'input' | 'output'): JsonSchema {
    const {
      $defs,
      $id: _localBase,
      ...root
    } = schema as JsonSchema & {
      $defs?: Record<string, JsonSchema>;
    };
    const defs: Record<string, JsonSchema> = { ...($defs ?? {}) };
    // A schema that refers to itself (`#`) becomes a definition too: the root of the answer.
    const selfReferring = JSON.stringify(root).includes('"$ref":"#"');
    const rootName = '__root';
    if (selfReferring) defs[rootName] = root;
    const names = new Map<string, string>();
    const local = (ref: string): [string, string] | undefined => {
      if (ref === '#' && selfReferring) return [rootName, ''];
      if (!ref.startsWith(DEFS)) return undefined;
      const [encoded, ...rest] = ref.slice(DEFS.length).split('/');
      const name = encoded!.replace(/~1/g, '/').replace(/~0/g, '~');
      return name in defs ? [name, rest.length ? `/${rest.join('/')}` : ''] : undefined;
    };
    const rewrite = (ref: string) => {
      const found = local(ref);
      return found ? `${COMPONENT}${names.get(found[0])}${found[1]}` : ref;
    };
    const canonicalOf = (name: string) =>
      JSON.stringify(
        mapRefs(defs[name], (ref) => {
          const found = local(ref);
          if (!found) return ref;
          return found[0] === name
            ? `#self${found[1]}`
            : `${COMPONENT}${names.get(found[0])}${found[1]}`;
        }),
      );
    const wanted = (name: string): string => {
      if (name === rootName) return pascal(context) || 'Schema';
      if (!isMadeUp(name)) return sanitize(name);
      const holder =
        keyAbove(root, pointerTo(name)) ??
        Object.values(defs)
          .map((def) => keyAbove(def, pointerTo(name)))
          .find(Boolean);
      return pascal(holder ?? '') || pascal(context) || 'Schema';
    };
    // Name each definition: one identical to a component keeps that component's name; a name
    // taken by other content becomes <name>Input (request side), then <Context><name>, then
    // numbered. Names of the definitions a definition refers to are part of its content, so
    // the rounds go on until no name changes.
    for (const name of Object.keys(defs)) names.set(name, wanted(name));
    for (let round = 0; round < 8; round++) {
      let changed = false;
      for (const name of Object.keys(defs)) {
        const content = canonicalOf(name);
        const existing = [...this.canonical].find(([, known]) => known === content)?.[0];
        let chosen = existing;
        if (!chosen) {
          const base = wanted(name);
          const candidates = [
            base,
            ...(io === 'input' ? [`${base}Input`] : []),
            `${pascal(context)}${base}`,
          ];
          chosen =
            candidates.find((candidate) => this.free(candidate, content, names, name)) ??
            this.numbered(base, content, names, name);
        }
        if (chosen !== names.get(name)) {
          names.set(name, chosen);
          changed = true;
        }
      }
      if (!changed) break;
    }
    for (const name of Object.keys(defs)) {
      const target = names.get(name)!;
      if (target in this.schemas) continue;
      this.schemas[target] = mapRefs(defs[name], rewrite) as JsonSchema;
      this.canonical.set(target, canonicalOf(name));
    }
    if (selfReferring) return { $ref: `${COMPONENT}${names.get(rootName)}` };
    return mapRefs(root, rewrite) as JsonSchema;
  }

  /** `candidate` is no component or one with exactly `content`, and no sibling definition's. */
  private free(
    candidate: string,
    content: string,
    names: Map<string, string>,
    self: string,
  ): boolean {
    const known = this.canonical.get(candidate);
    if (known !== undefined && known !== content) return false;
    return ![...names].some(([other, name]) => other !== self && name === candidate);
  }

  private numbered(
    base: string,
    content: string,
    names: Map<string, string>,
    self: string,
  ): string {
    for (let n = 2; ; n++) if (this.free(`${base}${n}`, content, names, self)) return `${base}${n}`;
  }
}

/** The value a local reference (`#/components/schemas/X`) points at in `document`, if any. */
function resolve(document: unknown, ref: string): unknown {
  let node: unknown = document;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(key in node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * Every `$ref` of an OpenAPI document that does not point into its `#/components/…`, or points
 * there at nothing. OpenAPI tools resolve a reference against the document's root, so anything
 * else (`#/$defs/…` inside a schema, an `$id`-relative one) fails them: empty is the rule.
 */
export function refsOutsideComponents(document: Record<string, unknown>): string[] {
  const refs = [...JSON.stringify(document).matchAll(/"\$ref":"((?:[^"\\]|\\.)*)"/g)].map(
    (match) => JSON.parse(`"${match[1]}"`) as string,
  );
  return [...new Set(refs)].filter(
    (ref) => !ref.startsWith('#/components/') || resolve(document, ref) === undefined,
  );
}
