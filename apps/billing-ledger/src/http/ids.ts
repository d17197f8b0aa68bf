import { Param, type PipeTransform } from '@nestjs/common';
import { parseId, type IdPrefix } from '../ids';

/** `@IdParam('tok')`: the `:id` path parameter, checked by parseId. */
export function IdParam(prefix: IdPrefix, message = 'not found'): ParameterDecorator {
  const pipe: PipeTransform<string, string> = {
    transform: (value) => parseId(prefix, value, message),
  };
  return Param('id', pipe);
}
