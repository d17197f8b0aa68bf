import { quoteInput, type DomainError } from '@meridian/errors';
import { invalidParams as invalid } from './gateway-errors';

const U64 = /^(0|[1-9][0-9]{0,19})$/;
const OBJECT_ID = /^0x[0-9a-fA-F]{1,64}$/;
const MAX_PAST_OBJECTS = 50;
/** ObjectDataOptions' flags (Sui JSON-RPC): the only options members checked. */
const OPTION_FLAGS: ReadonlySet<string> = new Set([
  'showType',
  'showOwner',
  'showPreviousTransaction',
  'showDisplay',
  'showContent',
  'showBcs',
  'showStorageRebate',
]);

/**
 * Network S params, checked before any upstream call (COMPAT "Network S"):
 * `suix_getLatestSuiSystemState` takes `[]`; `sui_tryMultiGetPastObjects` takes
 * `[[{objectId, version}, …], options?]`, version a u64 decimal string, options an object of
 * boolean flags (ObjectDataOptions).
 *
 * One rule for members this schema does not know, the node's (serde without
 * deny_unknown_fields): an object ref's or options' unknown member is ignored whatever its
 * value, and relayed as sent; only the known members are checked. (QA PP: an extra member of a
 * ref was refused -32602 while an unknown options flag was relayed and billed.)
 */
export function checkSuiParams(method: string, params: readonly unknown[]): DomainError | null {
  if (method === 'suix_getLatestSuiSystemState') {
    return params.length === 0
      ? null
      : invalid(`suix_getLatestSuiSystemState takes no parameters, got ${params.length}`);
  }
  if (method === 'sui_tryMultiGetPastObjects') {
    if (params.length < 1 || params.length > 2)
      return invalid(
        `sui_tryMultiGetPastObjects takes 1 or 2 parameters (past_objects, options), got ${params.length}`,
      );
    const pastObjects = params[0];
    if (!Array.isArray(pastObjects))
      return invalid('past_objects (parameter 1) must be an array of {objectId, version}');
    if (pastObjects.length === 0) return invalid('past_objects (parameter 1) must not be empty');
    if (pastObjects.length > MAX_PAST_OBJECTS)
      return invalid(
        `past_objects (parameter 1) holds ${pastObjects.length} entries, at most ${MAX_PAST_OBJECTS} allowed`,
      );
    for (let i = 0; i < pastObjects.length; i++) {
      const entry = pastObjects[i] as Record<string, unknown> | null;
      if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
        return invalid(`past_objects[${i}] must be an object {objectId, version}`);
      if (typeof entry['objectId'] !== 'string')
        return invalid(`past_objects[${i}].objectId is required and must be a string`);
      if (!OBJECT_ID.test(entry['objectId']))
        return invalid(
          `past_objects[${i}].objectId must be a 0x-prefixed hex object id of at most 32 bytes`,
        );
      if (typeof entry['version'] !== 'string')
        return invalid(`past_objects[${i}].version is required and must be a decimal string (u64)`);
      if (!U64.test(entry['version']) || BigInt(entry['version']) > 18446744073709551615n) {
        return invalid(
          `past_objects[${i}].version must be a u64 decimal string, got ${quoteInput(entry['version'])}`,
        );
      }
    }
    const options = params[1];
    if (options !== undefined && options !== null) {
      if (typeof options !== 'object' || Array.isArray(options))
        return invalid('options (parameter 2) must be an ObjectDataOptions object');
      for (const [flag, value] of Object.entries(options)) {
        if (OPTION_FLAGS.has(flag) && typeof value !== 'boolean')
          return invalid(`options.${quoteInput(flag)} must be a boolean`);
      }
    }
    return null;
  }
  return null;
}
