import { Param, type PipeTransform } from '@nestjs/common';
import { DomainError } from '@meridian/errors';

/** Shape of every id this service makes (credentials/secrets.ts `newId`): `<prefix>_<24 hex>`. */
const ID_SHAPE = /^(acc|key|tok|top)_[0-9a-f]{24}$/;

type IdPrefix = 'acc' | 'key' | 'tok';

/**
 * A path id of the given kind. Anything that is not one of our ids answers 404 like an unknown
 * id (COMPAT: an id you cannot see is indistinguishable from one that does not exist), so client
 * text never reaches a query it was not made for.
 */
export function parseId(prefix: IdPrefix, raw: string, message: string): string {
  const match = ID_SHAPE.exec(raw);
  if (!match || match[1] !== prefix) throw new DomainError('not_found', 'not_found', message);
  return raw;
}

/** `@IdParam('tok')`: the `:id` path parameter, checked by parseId. */
export function IdParam(prefix: IdPrefix, message = 'not found'): ParameterDecorator {
  const pipe: PipeTransform<string, string> = {
    transform: (value) => parseId(prefix, value, message),
  };
  return Param('id', pipe);
}
