import { DomainError } from '@meridian/errors';
import { z } from 'zod';

export type IdPrefix = 'acc' | 'key' | 'tok';

/**
 * Shape of every id this service makes (credentials/secrets.ts `newId`): `<prefix>_<24 hex>`.
 * The one home of the rule: `parseId` checks with these, and the REST routes declare them as
 * their path parameters' schemas in `/openapi.json` (`@ApiRoute` `params`).
 */
const idSchema = (prefix: IdPrefix, what: string) =>
  z
    .string()
    .regex(new RegExp(`^${prefix}_[0-9a-f]{24}$`))
    .describe(`${what}: ${prefix}_ and 24 hex (any other text answers 404 not_found)`);

export const ID_SCHEMAS: Record<IdPrefix, z.ZodString> = {
  acc: idSchema('acc', 'an account id'),
  key: idSchema('key', 'an API key id'),
  tok: idSchema('tok', 'an access token id'),
};

/**
 * A client-given id of the given kind (a REST path, a gRPC request). Anything that is not one of
 * our ids answers not found like an unknown id (COMPAT: an id you cannot see is indistinguishable from one that does not exist), so client
 * text never reaches a query it was not made for.
 */
export function parseId(prefix: IdPrefix, raw: string, message: string): string {
  if (!ID_SCHEMAS[prefix].safeParse(raw).success)
    throw new DomainError('not_found', 'not_found', message);
  return raw;
}
