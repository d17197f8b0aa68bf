/**
 * The BFF's session guards answer 401 `unauthenticated` when the cookie's session has ended
 * (signed out elsewhere, a password change, expiry). Other 401s are not about the session: a
 * wrong password at sign-in is `invalid_credentials`, and an upstream API's own 401 is
 * `unauthorized` (or the BFF's 503 `account_key_rejected`).
 */
export function isSessionGone(status: number, code: string): boolean {
  return status === 401 && code === 'unauthenticated';
}
