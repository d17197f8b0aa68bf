import { DomainError } from '@meridian/errors';

/** Shape of every id this service makes (credentials/secrets.ts `newId`): `<prefix>_<24 hex>`. */
const ID_SHAPE = /^(acc|key|tok|top)_[0-9a-f]{24}$/;

export type IdPrefix = 'acc' | 'key' | 'tok';

/**
 * A client-given id of the given kind (a REST path, a gRPC request). Anything that is not one of
 * our ids answers not found like an unknown id (COMPAT: an id you cannot see is indistinguishable from one that does not exist), so client
 * text never reaches a query it was not made for.
 */
export function parseId(prefix: IdPrefix, raw: string, message: string): string {
  const match = ID_SHAPE.exec(raw);
  if (!match || match[1] !== prefix) throw new DomainError('not_found', 'not_found', message);
  return raw;
}
