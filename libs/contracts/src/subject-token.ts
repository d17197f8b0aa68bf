/**
 * A variable subject token (network key, account id, consumer name). NATS splits subjects on
 * `.` and treats `*` / `>` as wildcards, so a token holding any of them would silently publish
 * to, or filter on, the wrong subjects. Ids and network keys in this system never need them.
 */
const TOKEN = /^[A-Za-z0-9_-]+$/;

export function subjectToken(value: string, what = 'subject token'): string {
  if (!TOKEN.test(value)) {
    throw new Error(`invalid ${what} ${JSON.stringify(value)}: letters, digits, _ and - only`);
  }
  return value;
}
