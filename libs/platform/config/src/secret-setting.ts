import { z } from 'zod';

/**
 * The mark of a placeholder credential: `deploy/secrets/example` ships its secrets with it, so a
 * trial cluster's publicly known keys are refused until someone replaces them.
 */
export const PLACEHOLDER_MARK = 'CHANGE-ME';

/**
 * The mark in any case, not right after a letter or digit: a name that merely contains the
 * letters (`exchange-meridian.internal` in a URL) is no placeholder.
 */
const MARK = new RegExp(`(?:^|[^a-z0-9])${PLACEHOLDER_MARK.toLowerCase()}`);

/**
 * Whether a value is a placeholder: the mark in its text, or in the bytes it decodes to as
 * base64 (base64url too: Node reads both alphabets) or hex, since keys are given encoded
 * (`WEBHOOK_SECRETS_KEY` of the example decodes to `CHANGE-ME-webhook-secrets-key-32`).
 */
export function holdsPlaceholder(value: string): boolean {
  const decoded = [Buffer.from(value, 'base64'), Buffer.from(value, 'hex')];
  return [value, ...decoded.map((bytes) => bytes.toString('latin1'))].some((text) =>
    MARK.test(text.toLowerCase()),
  );
}

const secretSettings = new WeakSet<z.ZodType>();

/**
 * An env variable holding a secret (a token, a key, a password): `inner` validates its form,
 * and first a placeholder (`holdsPlaceholder`) is refused, so the app stops at start with one
 * line naming the variable. Every app's schema declares its secrets through this.
 */
export function secretSetting<T extends z.ZodType<unknown, string>>(inner: T) {
  const schema = z
    .string()
    .refine(
      (value) => !holdsPlaceholder(value),
      `holds the placeholder ${PLACEHOLDER_MARK}; set a secret of your own`,
    )
    .pipe(inner);
  secretSettings.add(schema);
  return schema;
}

/**
 * A comma-separated list of secrets (the earlier keys of a key ring): a placeholder in any item
 * is refused naming its position, then `parse` reads the list and its error, if it throws, is
 * the message. Declared through `secretSetting`, so it is one of the app's secrets.
 */
export function secretListSetting<T>(parse: (value: string) => T) {
  return secretSetting(
    z.string().transform((value, ctx) => {
      const placeholder = value.split(',').findIndex((item) => holdsPlaceholder(item.trim()));
      if (placeholder >= 0) {
        ctx.addIssue({
          code: 'custom',
          message: `item ${placeholder + 1} of the list holds the placeholder ${PLACEHOLDER_MARK}; set a secret of your own`,
        });
        return z.NEVER;
      }
      try {
        return parse(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  );
}

/**
 * An optional bearer token shared with callers (at least 16 characters), such as the operator
 * token's previous value during a rotation: empty is the same as unset, so a Secret whose key is
 * emptied rather than removed does not stop the app.
 */
export function optionalTokenSetting() {
  return secretSetting(
    z
      .string()
      .refine((value) => value === '' || value.length >= 16, 'must be at least 16 characters')
      .transform((value) => (value === '' ? undefined : value)),
  ).optional();
}

/** Whether a schema (optional or defaulted included) was declared with `secretSetting`. */
export function isSecretSetting(schema: z.ZodType): boolean {
  let current: z.ZodType = schema;
  while (
    current instanceof z.ZodOptional ||
    current instanceof z.ZodDefault ||
    current instanceof z.ZodPrefault
  )
    current = current.unwrap() as z.ZodType;
  return secretSettings.has(current);
}
