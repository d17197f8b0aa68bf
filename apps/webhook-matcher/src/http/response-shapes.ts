import { z } from 'zod';

/**
 * Pieces the features' response schemas share (ADR 0602: the success answers of the API as strict
 * zod, passed as `responses` of `@ApiRoute` and checked against real answers in the integration
 * tests). Strict objects, so a view that grows a field without its schema fails those tests.
 */
export const isoTime = z.iso.datetime().describe('ISO 8601 time, UTC');

export const count = z.number().int().min(0);

/** An EVM address as the API stores and returns it: lower case. */
export const lowerCaseAddress = z
  .string()
  .regex(/^0x[0-9a-f]{40}$/)
  .describe('an EVM address, lower case (as stored, whatever case it was given in)');

/** Every list route of the API (COMPAT): `{items, next_cursor}`. */
export const pageOf = <T extends z.ZodType>(item: T) =>
  z.strictObject({
    items: z.array(item),
    next_cursor: z
      .string()
      .nullable()
      .describe('pass as cursor for the next page; null on the last page'),
  });

/**
 * A top-level schema that holds a recursive one (the filter tree), named. No longer needed for
 * the OpenAPI document: its builder moves every `$defs` into `components/schemas` and drops the
 * `$id` (ADR 0602 amendment), since OpenAPI tools resolve `#/$defs/…` against the document's
 * root, not against this `$id`; the `$id` matters only where the schema is converted alone.
 */
export const schemaResource = <T extends z.ZodType>(name: string, schema: T): T =>
  schema.meta({ $id: `urn:meridian:webhook-matcher:${name}` });
