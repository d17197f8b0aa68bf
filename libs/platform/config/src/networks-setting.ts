import { isNetworkKey, type NetworkKey } from '@meridian/networks';
import { z } from 'zod';

/**
 * `NETWORKS`: network keys, comma separated (spaces around a key ignored, duplicates collapse;
 * an unknown key is refused). The networks a deployment indexes: chain-indexer follows them,
 * webhook-matcher accepts webhooks on them. Set but empty: none. Unset: `fallback` (default
 * none), so an app may keep serving everything where the variable was never set.
 */
export function networkKeysSetting(fallback: readonly NetworkKey[] = []) {
  return z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (text === undefined) return [...fallback];
      const keys = text
        .split(',')
        .map((key) => key.trim())
        .filter(Boolean);
      for (const key of keys) {
        if (!isNetworkKey(key)) {
          ctx.addIssue({ code: 'custom', message: `unknown network key "${key}"` });
          return z.NEVER;
        }
      }
      return [...new Set(keys)] as NetworkKey[];
    });
}
