import { Param, type PipeTransform } from '@nestjs/common';
import { parseId, type IdPrefix } from '../ids';

/** `@IdParam('tok')`: the `:id` (or `:<name>`) path parameter, checked by parseId. */
export function IdParam(prefix: IdPrefix, message = 'not found', name = 'id'): ParameterDecorator {
  const pipe: PipeTransform<string, string> = {
    transform: (value) => parseId(prefix, value, message),
  };
  return Param(name, pipe);
}
