import { secretSetting } from '@meridian/platform-config';
import { z } from 'zod';
import { parseSecretsKey } from './secret-box-ring';

/**
 * A key ring's current key (WEBHOOK_SECRETS_KEY, DASHBOARD_SECRETS_KEY): 32 bytes, base64, kept
 * as given (`parseSecretsKey` reads it). A secret setting: a placeholder is refused first;
 * `message` is what another value is refused with.
 */
export function secretsKeySetting(message = 'must be 32 bytes, base64-encoded') {
  return secretSetting(
    z.string().refine((value) => {
      try {
        parseSecretsKey(value);
        return true;
      } catch {
        return false;
      }
    }, message),
  );
}
