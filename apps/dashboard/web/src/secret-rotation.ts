import { MAX_PREVIOUS_SECRETS } from '@meridian/webhooks/secret-rotation';
import { formatDateTime } from './format';

/**
 * A webhook's signing secrets in the page's words (webhook-matcher README "Secret rotation",
 * ADR 0423 amendment): every old secret signs until its own end, 24 h after the rotation that
 * replaced it; at most MAX_PREVIOUS_SECRETS at once, so a rotation that would make one more is
 * refused (409 `too_many_previous_secrets`) unless the dialog's checkbox ends them all.
 */

/** The rotation dialog's checkbox (`expire_previous: true`). */
export const STOP_OLD_SECRETS_LABEL = 'Stop the old secrets now (one leaked)';

/** The rotation dialog's rule, as the API applies it. */
export const ROTATION_RULE =
  `Each old secret keeps signing for 24 hours from the rotation that replaced it, and at most ` +
  `${MAX_PREVIOUS_SECRETS} old secrets sign at once: a rotation that would make one more is ` +
  `refused until the earliest stops. “Stop the old secrets now” ends them all.`;

const words = ['no', 'one', 'two', 'three', 'four', 'five'];
const few = (n: number) => words[n] ?? String(n);

/** "A, B and C". */
function joined(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** The ends of the old secrets still signing, latest first, in the page's date format. */
export function previousSecretEnds(expiries: readonly string[] | null | undefined): string[] {
  return [...(expiries ?? [])]
    .filter((iso) => !Number.isNaN(Date.parse(iso)))
    .sort((a, b) => Date.parse(b) - Date.parse(a))
    .map((iso) => formatDateTime(iso));
}

/** The Settings card's fact: one line per old secret still signing, or none. */
export function previousSecretLines(expiries: readonly string[] | null | undefined): string[] {
  const ends = previousSecretEnds(expiries);
  if (ends.length === 0) return ['none: only the current secret signs'];
  return ends.map((end) => `signs until ${end}`);
}

/** What a rotation answers besides the new secret. */
export interface RotationAnswer {
  /** When the secret just replaced stops; null: `expire_previous` ended them all. */
  previous_secret_expires_at?: string | null;
  /** Every old secret still signing, latest first (the webhook object's field). */
  previous_secrets_expire_at?: string[];
}

/** The notice under a new secret: how many old secrets sign beside it, and until when. */
export function rotationNotice(answer: RotationAnswer): string {
  const expiries =
    answer.previous_secrets_expire_at ??
    (answer.previous_secret_expires_at ? [answer.previous_secret_expires_at] : []);
  const ends = previousSecretEnds(expiries);
  if (ends.length === 0)
    return 'The old secrets no longer sign: deliveries carry only the new signature.';
  if (ends.length === 1) return `The old secret keeps signing alongside it until ${ends[0]}.`;
  const [latest, ...older] = ends;
  const sentence =
    `${ends.length} old secrets keep signing alongside it: the one just replaced until ` +
    `${latest}, ${older.length === 1 ? 'the one before' : 'the older ones'} until ` +
    `${joined(older)}.`;
  if (ends.length < MAX_PREVIOUS_SECRETS) return sentence;
  return (
    `${sentence} That is the most that sign at once: the next rotation is taken after ` +
    `${older[older.length - 1]}, or with “Stop the old secrets now”.`
  );
}

/**
 * A refused rotation in the page's words; undefined for any other refusal (the page's usual
 * mapping applies). 409 `too_many_previous_secrets` names `next_rotation_at` (when the earliest
 * old secret stops) and `previous_secrets_expire_at`.
 */
export function rotationRefusal(code: string, body: Record<string, unknown>): string | undefined {
  if (code !== 'too_many_previous_secrets') return undefined;
  const expiries = Array.isArray(body['previous_secrets_expire_at'])
    ? (body['previous_secrets_expire_at'] as unknown[]).filter(
        (v): v is string => typeof v === 'string',
      )
    : [];
  const count = expiries.length || MAX_PREVIOUS_SECRETS;
  const next = body['next_rotation_at'];
  const when =
    typeof next === 'string' && !Number.isNaN(Date.parse(next))
      ? `after ${formatDateTime(next)}, when the earliest stops`
      : 'once the earliest stops';
  return (
    `Not rotated: ${few(count)} old secrets still sign, the most a webhook keeps at once. ` +
    `Rotate again ${when}, or tick “Stop the old secrets now” in the rotation dialog to end ` +
    `them all now (deliveries then carry only the new signature).`
  );
}
