import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { DbJobGate } from '@meridian/platform-db';
import { LOGGER } from '@meridian/platform-observability';
import type { Logger } from 'pino';
import { DomainError } from '@meridian/errors';
import type { Clock } from '@meridian/time';
import { CLOCK } from '../clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { SignupModeService } from '../settings/signup-mode.service';
import { InvitationsRepository } from '../settings/invitations.repository';
import { ACCOUNT_KEY_SCOPES, ManagedKeys } from '../upstream/managed-keys';
import { AccountSecrets } from '../secrets/account-secrets';
import { UpstreamClient, upstreamError } from '../upstream/upstream.client';
import { LoginFailuresRepository } from './login-failures.repository';
import { windowRetryAfterMs, type WindowRule } from '@meridian/rate-limits';
import {
  signInThrottleKeys,
  signInWaitMs,
  signUpThrottleKeys,
  type SignInLimits,
} from './login-throttle';
import { decoyHash, hashPassword, verifyPassword } from './password';
import { newId, newSecret, sha256 } from './secrets';
import { SessionsRepository, type SessionRow } from './sessions.repository';
import { SignUpRequestsRepository, type SignUpRequest } from './sign-up-requests.repository';
import { UsersRepository, type AccountRole, type UserRow } from './users.repository';

export interface NewSession {
  /** The cookie value; only its sha256 is stored. */
  token: string;
  csrfToken: string;
  expiresAt: Date;
}

export interface CurrentSession {
  session: SessionRow;
  user: UserRow;
}

interface CreatedAccount {
  account: { id: string };
  api_key: { id: string; key: string };
}

/** Most key ids one `POST /admin/accounts/managed-keys` names (billing's MAX_MANAGED_KEYS). */
const MANAGED_KEYS_PAGE = 500;

@Injectable()
export class AuthService implements OnApplicationBootstrap {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly users: UsersRepository,
    private readonly signUpRequests: SignUpRequestsRepository,
    private readonly sessions: SessionsRepository,
    private readonly failures: LoginFailuresRepository,
    private readonly invitations: InvitationsRepository,
    private readonly signupMode: SignupModeService,
    private readonly upstream: UpstreamClient,
    private readonly secrets: AccountSecrets,
    private readonly managedKeys: ManagedKeys,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly db: DbJobGate,
  ) {}

  /**
   * At each start, in the background, once Postgres is connected (DbJobGate.runOnce: it reads
   * the users; a wrong DATABASE_URL's cause or an outage is logged once elsewhere, and the job
   * runs again when Postgres answers): `flagManagedKeys` (billing may come up later).
   */
  onApplicationBootstrap(): void {
    void this.db
      .runOnce(() => this.flagManagedKeys())
      .then(
        (flagged) => {
          if (flagged > 0) this.logger.info({ flagged }, 'flagged older dashboard keys as managed');
        },
        (error: unknown) =>
          this.logger.warn(
            { err: error },
            'could not flag the dashboard keys as managed in billing; retried at the next start',
          ),
      );
  }

  /**
   * Tells billing which keys are this dashboard's own (the ones users signed up with before
   * sign-up passed `api_key_managed`): billing cannot tell them from an operator's first key,
   * the dashboard can. Idempotent; how many billing flagged now.
   */
  async flagManagedKeys(): Promise<number> {
    let flagged = 0;
    for (let after: string | null = null; ;) {
      const page = await this.users.customerKeyIds(after, MANAGED_KEYS_PAGE);
      if (page.length === 0) return flagged;
      const answer = await this.upstream.json<{ flagged: number }>(
        'billing',
        'POST',
        '/admin/accounts/managed-keys',
        {
          bearer: this.config.OPERATOR_TOKEN,
          body: { api_key_ids: page.map((row) => row.apiKeyId) },
        },
      );
      flagged += answer.flagged;
      after = page[page.length - 1]!.id;
    }
  }

  /**
   * A new user is a new billing account (operator API) whose every-scope key the dashboard keeps
   * sealed and uses server-side; the browser never holds it.
   */
  async signUp(
    input: {
      email: string;
      password: string;
      name?: string;
      invitation?: string;
    },
    clientIp: string,
  ): Promise<{ user: UserRow; session: NewSession }> {
    const now = this.clock.now();
    // A team invitation joins an existing account whatever the sign-up mode (ADR 0604): it is
    // not a self-service sign-up, and it makes no billing account.
    const team = input.invitation
      ? (await this.invitations.byHash(sha256(input.invitation)))?.team
      : undefined;
    const invite = team !== undefined || (await this.signupMode.mode()) === 'invite';
    // Refused before the throttle counts (README "Sign-up by invitation"): a closed sign-up
    // without an invitation makes nothing, and an invitation code is a 192-bit secret that no
    // number of tries guesses, so neither costs an attempt of the address's budget.
    if (invite && !input.invitation)
      throw new DomainError(
        'invitation_required',
        'forbidden',
        'sign-up is by invitation only; ask an operator for an invitation link',
      );
    // Each sign-up is a billing account with a daily allowance: a client address may try
    // SIGNUP_MAX_PER_ADDRESS times in SIGNUP_WINDOW_MS, whatever the outcome, so the 409 that
    // tells a taken email is throttled with it. The same sign-up sent again (an email the address
    // tried in the window: a double submit, a retry replaying the stored request) is one attempt,
    // counted once and answered as its first sending would be, never 429 (ADR 0601 amendment).
    const signup = signUpThrottleKeys(clientIp, input.email);
    const signupRule = {
      limit: this.config.SIGNUP_MAX_PER_ADDRESS,
      windowMs: this.config.SIGNUP_WINDOW_MS,
    };
    const windowStart = new Date(now.getTime() - signupRule.windowMs);
    // A team invitation's sign-up is not counted (ADR 0604): it makes no billing account, only a
    // key on the inviter's, and it can tell only about the one email an owner invited. Counted
    // before anything is made, in one step with the check (an attempt in flight counts): a
    // burst of sign-ups from one address makes no more than the limit (QA H2).
    const reserved = team
      ? { wait: 0, recorded: false }
      : await this.failures.withKeysLocked([signup.count], async (db) => {
          if (await this.failures.seen(signup.attempt, windowStart, db))
            return { wait: 0, recorded: false };
          const since = await this.failures.recent(signup.count, windowStart, db);
          const wait = windowRetryAfterMs(since, now, signupRule);
          if (wait === 0)
            await this.failures.record([signup.count, signup.attempt], now, windowStart, db);
          return { wait, recorded: wait === 0 };
        });
    if (reserved.wait > 0)
      throw new DomainError(
        'too_many_sign_ups',
        'rate_limited',
        `too many sign-ups from this address; try again in ${Math.ceil(reserved.wait / 60_000)} min`,
        { details: { retryAfterMs: reserved.wait } },
      );
    const emailTaken = () =>
      team
        ? // One account per user (ADR 0604): an email with a user cannot join another account.
          new DomainError(
            'email_taken',
            'conflict',
            'this email already has a dashboard user, which belongs to its own account; a user belongs to one account, so join with another email',
            {
              details: {
                fields: {
                  email:
                    'this email already has a dashboard user of another account; join with another email',
                },
              },
            },
          )
        : new DomainError('email_taken', 'conflict', 'an account with this email exists', {
            details: { fields: { email: 'an account with this email exists; sign in instead' } },
          });
    let invitationHash: string | undefined;
    if (invite) {
      invitationHash = sha256(input.invitation!);
      const consumed = await this.invitations.consume(invitationHash, input.email, now);
      // A team invitation must still be the team invitation it was read as above.
      if (!consumed || consumed.team?.accountId !== team?.accountId) {
        // Not counted (README "Sign-up by invitation"): the attempt counted above is taken back.
        if (reserved.recorded) await this.failures.unrecord([signup.count, signup.attempt], now);
        // Set aside when its email got a user (QA QQ): said as the taken email it is.
        const set = await this.invitations.byHash(invitationHash);
        if (
          set?.voided === 'email_has_user' &&
          set.email.toLowerCase() === input.email.toLowerCase()
        )
          throw emailTaken();
        // Revoked by the operator, or a team's by its owner: said so, the link's page too.
        if (set?.voided === 'revoked')
          throw new DomainError(
            'invitation_revoked',
            'forbidden',
            set.team
              ? "this invitation link was revoked by an owner of the team; ask the team's owner for a new one"
              : 'this invitation link was revoked by an operator; ask an operator for a new one',
          );
        throw new DomainError(
          'invitation_invalid',
          'forbidden',
          'this invitation is unknown, used, expired or for another email',
        );
      }
    }
    try {
      if (await this.users.byEmail(input.email)) throw emailTaken();
      const passwordHash = await hashPassword(input.password);
      // The email's billing request is stored (on the pool, committed) before the claim is
      // taken: the claim holds one pool connection, and nothing under it takes a second (QA H1:
      // a full pool of claims each waiting for another connection never answered again).
      let request = team
        ? undefined
        : await this.signUpRequests.pendingOr(input.email, this.freshRequest(input), now);
      // The email is claimed before billing is asked for an account, and the user row is
      // written under the claim: sign-ups racing with one email (a double submit) make one
      // billing account; the others answer 409 at once (QA: one orphan account each).
      const claimed = (pending: SignUpRequest<unknown> | undefined) =>
        this.users.withEmailClaimed(input.email, async (db) => {
          if (await this.users.byEmail(input.email, db)) throw emailTaken();
          const created = team
            ? await this.teamKey(team.accountId)
            : await this.newAccount(pending!);
          const row: UserRow = {
            id: newId('usr'),
            email: input.email,
            passwordHash,
            role: 'customer',
            accountId: created.account.id,
            accountRole: team?.accountRole ?? 'owner',
            apiKeyId: created.api_key.id,
            sealedApiKey: this.secrets.seal(created.api_key.key),
            createdAt: now,
          };
          // Under the claim only the operator's own row (OPERATOR_EMAIL) could take the email.
          try {
            if (!(await this.users.insert(row, db))) throw emailTaken();
          } catch (error) {
            // A member's key made for the existing account but not stored is revoked again.
            if (team) await this.managedKeys.revoke(team.accountId, created.api_key.id);
            throw error;
          }
          // Answered and held: the next sign-up of this email (after the user is removed from
          // the account) is a new request, for a new account.
          if (!team) await this.signUpRequests.done(db, input.email);
          return row;
        });
      let user: UserRow | undefined;
      try {
        user = await claimed(request);
      } catch (error) {
        if (!request || !(error instanceof DomainError && error.code === 'idempotency_key_reused'))
          throw error;
        // Billing no longer takes the stored request for the same one (a billing release that
        // reads the body otherwise): a new request rather than an email that can never sign
        // up; the account of the stored one stays unused, as before the request was stored.
        // Replaced once the claim is let go (on the pool, committed before billing is asked).
        this.logger.warn(
          { idempotencyKey: request.idempotencyKey },
          "billing refused a sign-up's stored request as another one; sent a new request",
        );
        request = await this.signUpRequests.replace(
          input.email,
          request.idempotencyKey,
          this.freshRequest(input),
          now,
        );
        user = await claimed(request);
      }
      if (!user)
        throw new DomainError(
          'sign_up_in_progress',
          'conflict',
          'a sign-up with this email is under way',
          {
            details: {
              fields: { email: 'a sign-up with this email is under way; sign in in a moment' },
            },
          },
        );
      return { user, session: await this.startSession(user, now) };
    } catch (error) {
      if (invitationHash) await this.invitations.release(invitationHash);
      throw error;
    }
  }

  /**
   * The new user's billing account (ADR 0601 amendment): `POST /admin/accounts` with the email's
   * pending request (`SignUpRequestsRepository.pendingOr`, stored before the claim): the
   * `Idempotency-Key` and body an earlier sign-up of it sent when that one wrote no user (the
   * dashboard died or its insert failed after billing made the account, or billing's answer was
   * lost), else a new one. Billing answers a repeat with the account it made then and a new key,
   * the earlier one revoked: one account however many tries. Takes no pool connection: it runs
   * under the sign-up's claim.
   */
  private newAccount(request: SignUpRequest<unknown>): Promise<CreatedAccount> {
    return this.upstream.json<CreatedAccount>('billing', 'POST', '/admin/accounts', {
      bearer: this.config.OPERATOR_TOKEN,
      body: request.body,
      headers: { 'idempotency-key': request.idempotencyKey },
    });
  }

  /** A new sign-up's billing request: a new `Idempotency-Key`, the account's body. */
  private freshRequest(input: { email: string; name?: string }): SignUpRequest<unknown> {
    return {
      idempotencyKey: `dashboard-sign-up:${newSecret(24)}`,
      body: {
        name: input.name ?? input.email,
        type: 'individual',
        api_key_scopes: ACCOUNT_KEY_SCOPES,
        // The key this dashboard signs the account's calls with: billing never lists it to the
        // account nor lets the account delete it (no lock-out; billing README).
        api_key_managed: true,
      },
    };
  }

  /**
   * What an invitation link's page shows on load: the invited email while the invitation may
   * still be used, else why not. 404 `invitation_unknown` for a code never issued.
   */
  async invitation(code: string): Promise<{
    status: 'valid' | 'used' | 'expired' | 'void';
    /** Why a `void` one cannot be used (`email_has_user`, `superseded`, `revoked`). */
    reason?: string;
    email?: string;
    expires_at: string;
    team?: { role: AccountRole };
  }> {
    const found = await this.invitations.byHash(sha256(code));
    if (!found)
      throw new DomainError(
        'invitation_unknown',
        'not_found',
        'this invitation link is unknown; check that it was copied whole, or ask for a new one',
      );
    const expires_at = found.expiresAt.toISOString();
    // A team invitation's link says it joins an account (ADR 0604), and, used or not, whom to
    // ask for a new one (the team's owner, not an operator): `team` in every state.
    const team = found.team ? { team: { role: found.team.accountRole } } : {};
    if (found.usedAt) return { status: 'used', expires_at, ...team };
    // One set aside as expired when its email was invited again says so: it had expired.
    if (found.voided && found.voided !== 'expired')
      return { status: 'void', reason: found.voided, expires_at, ...team };
    if (found.expiresAt <= this.clock.now()) return { status: 'expired', expires_at, ...team };
    return { status: 'valid', email: found.email, expires_at, ...team };
  }

  async signIn(email: string, password: string, clientIp: string): Promise<NewSession> {
    const now = this.clock.now();
    const keys = signInThrottleKeys(email, clientIp);
    const limits = this.signInLimits();
    const windowStart = (rule: WindowRule) => new Date(now.getTime() - rule.windowMs);
    const known = await this.failures.seen(keys.known, new Date(now.getTime() - limits.knownMs));
    // The attempt is counted as a failure before the password is checked, in one step with the
    // check (an attempt in flight counts), and taken back if it succeeds: a parallel burst gets
    // no more passwords checked than the limits allow (QA H2: 100 at once were all checked).
    const counted = [keys.pair, keys.account, keys.address];
    const wait = await this.failures.withKeysLocked(counted, async (db) => {
      const recent = async (key: string, rule: WindowRule) =>
        this.failures.recent(key, windowStart(rule), db);
      const wait = signInWaitMs(
        {
          pair: await recent(keys.pair, limits.pair),
          account: known ? [] : await recent(keys.account, limits.account),
          address: known ? [] : await recent(keys.address, limits.address),
        },
        known,
        now,
        limits,
      );
      if (wait === 0) await this.failures.record(counted, now, windowStart(limits.pair), db);
      return wait;
    });
    if (wait > 0)
      throw new DomainError(
        'too_many_attempts',
        'rate_limited',
        `too many failed sign-ins; try again in ${Math.ceil(wait / 60_000)} min`,
        { details: { retryAfterMs: wait } },
      );
    let user: UserRow | undefined;
    try {
      user = await this.users.byEmail(email);
      const ok = await verifyPassword(user?.passwordHash ?? (await decoyHash()), password);
      if (!ok) user = undefined;
    } catch (error) {
      // Not checked (Postgres out of reach): not a failure either.
      await this.failures.unrecord(counted, now).catch(() => undefined);
      throw error;
    }
    // A failure stays counted, as recorded above.
    if (!user)
      throw new DomainError('invalid_credentials', 'unauthenticated', 'wrong email or password');
    // A success is no failure: the pair's failures go, and this attempt's rows of the account
    // and the address; their other failures stay: they count guessing from elsewhere.
    await this.failures.clear(keys.pair);
    await this.failures.unrecord([keys.account, keys.address], now);
    await this.failures.remember(keys.known, now);
    return this.startSession(user, now);
  }

  /** The sign-in throttle's limits (login-throttle.ts), all in LOGIN_WINDOW_MS. */
  private signInLimits(): SignInLimits {
    const windowMs = this.config.LOGIN_WINDOW_MS;
    return {
      pair: { limit: this.config.LOGIN_MAX_FAILURES, windowMs },
      account: { limit: this.config.LOGIN_MAX_FAILURES_PER_ACCOUNT, windowMs },
      address: { limit: this.config.LOGIN_MAX_FAILURES_PER_ADDRESS, windowMs },
      knownMs: this.config.LOGIN_KNOWN_ADDRESS_MS,
    };
  }

  /**
   * Operator: ends the sign-in locks of an email (every address) and/or of a client address
   * (every email), as if their failures had not happened. Answers the failure rows removed.
   */
  async clearSignInLocks(target: { email?: string; address?: string }): Promise<number> {
    return this.failures.clearSignIn({
      ...(target.email ? { email: target.email.toLowerCase() } : {}),
      ...(target.address ? { address: target.address } : {}),
    });
  }

  async signOut(sessionHash: string): Promise<void> {
    await this.sessions.delete(sessionHash);
  }

  /** The session behind a cookie, or undefined when it is unknown, expired or idle too long. */
  async current(token: string | undefined): Promise<CurrentSession | undefined> {
    if (!token) return undefined;
    const now = this.clock.now();
    const session = await this.sessions.byHash(sha256(token));
    if (!session) return undefined;
    const idleUntil = session.lastSeenAt.getTime() + this.config.SESSION_IDLE_MS;
    if (session.expiresAt <= now || idleUntil <= now.getTime()) {
      await this.sessions.delete(session.idHash);
      return undefined;
    }
    const user = await this.users.byId(session.userId);
    if (!user) return undefined;
    // One write a minute is enough for the idle rule.
    if (now.getTime() - session.lastSeenAt.getTime() > 60_000)
      await this.sessions.touch(session.idHash, now);
    return { session, user };
  }

  /** Other sessions of the user end: whoever knew the old password is signed out. */
  async changePassword(
    current: CurrentSession,
    currentPassword: string,
    newPassword: string,
  ): Promise<void> {
    if (!(await verifyPassword(current.user.passwordHash, currentPassword)))
      throw new DomainError('invalid_credentials', 'invalid', 'the current password is wrong', {
        details: { fields: { current_password: 'the current password is wrong' } },
      });
    await this.users.setPassword(
      current.user.id,
      await hashPassword(newPassword),
      this.clock.now(),
    );
    await this.sessions.deleteOthers(current.user.id, current.session.idHash);
  }

  /** Creates the configured operator once (OPERATOR_EMAIL / OPERATOR_PASSWORD). */
  async ensureOperator(): Promise<void> {
    const { OPERATOR_EMAIL: email, OPERATOR_PASSWORD: password } = this.config;
    if (!email || !password || (await this.users.byEmail(email))) return;
    await this.users.insert({
      id: newId('usr'),
      email: email.toLowerCase(),
      passwordHash: await hashPassword(password),
      role: 'operator',
      accountId: null,
      accountRole: null,
      apiKeyId: null,
      sealedApiKey: null,
      createdAt: this.clock.now(),
    });
  }

  /**
   * A new member's key on the account they join (ADR 0604): a managed key of every scope from
   * billing's operator API, as a renewal makes (ADR 0110 amendment). 503
   * `account_key_rejected` when billing will not make one (the account gone from billing).
   */
  private async teamKey(accountId: string): Promise<CreatedAccount> {
    const created = await this.managedKeys.make(accountId);
    if (created.made)
      return { account: { id: accountId }, api_key: { id: created.id, key: created.key } };
    if (created.answer.status >= 500) throw upstreamError('billing', created.answer);
    throw new DomainError(
      'account_key_rejected',
      'unavailable',
      'billing would not make a key for the account of this invitation',
    );
  }

  private async startSession(user: UserRow, now: Date): Promise<NewSession> {
    const token = newSecret();
    const csrfToken = newSecret();
    const expiresAt = new Date(now.getTime() + this.config.SESSION_TTL_MS);
    await this.sessions.insert(
      { idHash: sha256(token), userId: user.id, csrfToken, lastSeenAt: now, expiresAt },
      now,
    );
    return { token, csrfToken, expiresAt };
  }
}
