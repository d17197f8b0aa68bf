import { plainFieldMessage } from './field-messages';

/**
 * Where an API's error goes on a form. The APIs name the field at fault in several shapes
 * (`fields`, `field`/`path`/`pointer`, `details[]`) and locate it in the request
 * (`path: "body.cu"`, `body.accounts[1].plan`, a JSON pointer `/cu`); `fieldsOf` reads them all
 * into field paths as a form names its fields (`cu`, `accounts[1].plan`), and `placeErrors`
 * puts each message under the field a form shows for it, the rest in the form's notice: an
 * error is never shown nowhere.
 */

/** A located path as a form names the field: `body.cu` → `cu`, `/a/b` → `a.b`. */
export function fieldPath(path: string): string {
  const dotted = path.startsWith('/') ? path.slice(1).replace(/\//g, '.') : path;
  return dotted.replace(/^(?:body|query|params|headers)(?:\.(?=.)|(?=\[))/, '');
}

/** Field messages in any of the shapes our APIs answer: `fields`, `field`/`path`, `details[]`. */
export function fieldsOf(body: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  const message = typeof body['message'] === 'string' ? body['message'] : '';
  if (body['fields'] && typeof body['fields'] === 'object')
    for (const [key, value] of Object.entries(body['fields'] as Record<string, unknown>))
      out[fieldPath(key)] = plainFieldMessage(String(value));
  for (const key of ['field', 'path', 'pointer'] as const) {
    const value = body[key];
    if (typeof value === 'string' && value) out[fieldPath(value)] = plainFieldMessage(message);
  }
  const details = body['details'];
  if (Array.isArray(details))
    for (const item of details as Array<Record<string, unknown>>) {
      const path = item['path'] ?? item['field'];
      const text = item['message'];
      if (path !== undefined && typeof text === 'string')
        out[fieldPath(Array.isArray(path) ? path.join('.') : String(path))] =
          plainFieldMessage(text);
    }
  return out;
}

/** What placeErrors reads of an error: the ApiError's message and its field messages. */
interface WithFields {
  message: string;
  fields: Record<string, string>;
}

const hasFields = (error: unknown): error is Error & WithFields =>
  error instanceof Error &&
  typeof (error as Partial<WithFields>).fields === 'object' &&
  (error as Partial<WithFields>).fields !== null;

/** Whether the API's `path` is `field` or lies under it (`addresses[3]`, `filters.any.0`). */
export const isUnder = (path: string, field: string): boolean =>
  path === field || path.startsWith(`${field}.`) || path.startsWith(`${field}[`);

export interface PlacedErrors<K extends string> {
  /** The message under each field the form shows, by the form's own name for it. */
  fields: Partial<Record<K, string>>;
  /**
   * What no field of the form shows: the error's message when none of its fields is on the
   * form (or it names none, or the request failed without an answer), else the messages of the
   * fields the form lacks. Undefined when every message sits under a field.
   */
  notice: string | undefined;
}

/**
 * Puts an error's messages on a form: `fields` maps each field the form shows to the API paths
 * it answers for (`{ addresses: ['addresses', 'filters'] }`); the first message at or under one
 * of them is that field's. Anything else is the notice.
 */
export function placeErrors<K extends string>(
  error: unknown,
  fields: Record<K, readonly string[]>,
): PlacedErrors<K> {
  const placed: Partial<Record<K, string>> = {};
  if (!error) return { fields: placed, notice: undefined };
  if (!hasFields(error))
    return {
      fields: placed,
      notice: error instanceof Error ? error.message : 'the request failed',
    };
  const unplaced: string[] = [];
  let any = false;
  for (const [path, message] of Object.entries(error.fields)) {
    const owner = (Object.keys(fields) as K[]).find((name) =>
      fields[name].some((f) => isUnder(path, f)),
    );
    if (owner === undefined) {
      unplaced.push(message || error.message);
      continue;
    }
    any = true;
    placed[owner] ??= message || error.message;
  }
  const notice = !any ? error.message : unplaced.length ? unplaced.join('; ') : undefined;
  return { fields: placed, notice };
}
