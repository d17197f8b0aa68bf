import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import { LOGGER } from '@meridian/platform-observability';
import type { Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { newId, newSecret, sha256 } from '../auth/secrets';
import { UsersRepository, type AccountRole, type UserRow } from '../auth/users.repository';
import { ManagedKeys } from '../upstream/managed-keys';
import { CLOCK } from '../clock.token';
import { InvitationsRepository } from '../settings/invitations.repository';
import { invitationPending } from '../settings/invitation-pending';
import { revokeInvitation } from '../settings/invitation-revoke';
import { AccountKeyService } from '../customer/account-key.service';
import { TokenChangesRepository, type TokenChangeRow } from './token-changes.repository';
import { ownerRequired as ownerRequiredTo } from './owner-required';

/** How long a team invitation may be used: as the operator's sign-up invitations. */
export const TEAM_INVITATION_TTL_MS = 7 * 24 * 3_600_000;

/**
 * How far back a removal looks for access tokens the member made or rolled (ADR 0604
 * amendment): long enough to cover someone who set up an app and moved on.
 */
export const RECENT_TOKEN_CHANGES_MS = 30 * 24 * 3_600_000;

/** An access token a removed member made or rolled recently, still active: the owner's to roll. */
export interface TokenToRoll {
  id: string;
  name: string | null;
  network: string | null;
  hint: string | null;
  change: 'created' | 'rolled';
  at: string;
}

/** What a removal did and what it leaves to the owner (`DELETE /api/team/members/{id}`). */
export interface Removal {
  revoked_api_keys: string[];
  access_tokens_to_roll: TokenToRoll[];
}

/** Which access token change a 201 of billing's at this path is, if any. */
export function tokenChangeOf(path: string): 'created' | 'rolled' | undefined {
  if (path === '/access-tokens') return 'created';
  return /^\/access-tokens\/[^/]+\/roll$/.test(path) ? 'rolled' : undefined;
}

/** The user's account id; a customer always has one (the schema's CHECK). */
const accountOf = (user: UserRow): string => user.accountId!;

const ownerRequired = () => ownerRequiredTo('manages its team');

const lastOwner = () =>
  new DomainError(
    'last_owner',
    'conflict',
    'an account keeps at least one owner: make another member an owner first',
  );

const memberNotFound = () =>
  new DomainError('member_not_found', 'not_found', 'this account has no member with this id');

/**
 * The caller's role as the locked rows say: an owner demoted by a change that committed while
 * this request waited for the locks is no longer one.
 */
const requireOwnerIn = (rows: UserRow[], user: UserRow): void => {
  if (rows.find((row) => row.id === user.id)?.accountRole !== 'owner') throw ownerRequired();
};

/** Whether `target` is the only owner among the account's locked rows. */
const isLastOwner = (rows: UserRow[], target: UserRow): boolean =>
  target.accountRole === 'owner' && rows.filter((row) => row.accountRole === 'owner').length === 1;

const memberView = (member: UserRow, user: UserRow) => ({
  id: member.id,
  email: member.email,
  role: member.accountRole,
  joined_at: member.createdAt.toISOString(),
  you: member.id === user.id,
});

/**
 * The account's team (ADR 0604): its users as owners and members, team invitations by email
 * (the sign-up invitation mechanism with an account and a role), an owner's change of a member's
 * role, removal of a member by an owner or by themselves (leaving: their dashboard key revoked in
 * billing, their sessions and user row gone); the account never loses its last owner.
 */
@Injectable()
export class TeamService {
  constructor(
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly users: UsersRepository,
    private readonly invitations: InvitationsRepository,
    private readonly managedKeys: ManagedKeys,
    private readonly tokenChanges: TokenChangesRepository,
    private readonly keys: AccountKeyService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Notes that the user made or rolled an access token through the dashboard (billing answered
   * 2xx at `path`: 201 made, 200 rolled), for a removal to list (ADR 0604 amendment). Best
   * effort: the token exists whatever happens here, so a failure is logged, never the user's
   * error.
   */
  async noteTokenChange(user: UserRow, path: string, body: unknown): Promise<void> {
    const change = tokenChangeOf(path);
    const id = (body as { id?: unknown } | null)?.id;
    if (!change || typeof id !== 'string') return;
    await this.tokenChanges
      .record(accountOf(user), user.id, id, change, this.clock.now())
      .catch((error: unknown) =>
        this.logger.warn({ err: error, userId: user.id, tokenId: id }, 'token change not noted'),
      );
  }

  async view(user: UserRow) {
    const accountId = accountOf(user);
    const [members, invitations] = await Promise.all([
      this.users.ofAccount(accountId),
      this.invitations.pendingOfAccount(accountId, this.clock.now()),
    ]);
    return {
      account_id: accountId,
      your_role: user.accountRole,
      members: members.map((member) => memberView(member, user)),
      invitations: invitations.map((invitation) => ({
        id: invitation.id,
        email: invitation.email,
        role: invitation.accountRole,
        created_at: invitation.createdAt.toISOString(),
        expires_at: invitation.expiresAt.toISOString(),
      })),
    };
  }

  /** The code is shown once (as a link); only its hash is kept. */
  async invite(user: UserRow, email: string, role: AccountRole) {
    if (user.accountRole !== 'owner') throw ownerRequired();
    // One account per user: an email with a user could never use the link (sign-up refuses it).
    if (await this.users.byEmail(email))
      throw new DomainError(
        'email_taken',
        'conflict',
        'this email already has a dashboard user; a user belongs to one account',
        {
          details: {
            fields: {
              email:
                'this email already has a dashboard user (of this or another account); invite another email',
            },
          },
        },
      );
    const code = newSecret(24);
    const id = newId('inv');
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + TEAM_INVITATION_TTL_MS);
    const made = await this.invitations.insert(sha256(code), email, user.id, now, expiresAt, id, {
      accountId: accountOf(user),
      accountRole: role,
    });
    // One pending invitation per (account, email) (QA QQ): 409 naming the pending one.
    if (!made) throw await invitationPending(this.invitations, accountOf(user), email);
    return { id, email, role, code, expires_at: expiresAt.toISOString() };
  }

  async revokeInvitation(user: UserRow, id: string): Promise<void> {
    if (user.accountRole !== 'owner') throw ownerRequired();
    // Kept, set aside as revoked, as the operator's (one rule: `revokeInvitation`).
    await revokeInvitation(this.invitations, accountOf(user), id, this.clock.now());
  }

  /**
   * Promotes a member to owner or demotes an owner (themselves included) to member. Under the
   * account's row locks, as removal: the last owner is never demoted (409 `last_owner`), even by
   * two changes (or a change and a removal) at once. The same role again changes nothing.
   */
  async changeRole(user: UserRow, id: string, role: AccountRole) {
    if (user.accountRole !== 'owner') throw ownerRequired();
    return this.users.withAccountLocked(accountOf(user), async (db, rows) => {
      requireOwnerIn(rows, user);
      const target = rows.find((row) => row.id === id);
      if (!target) throw memberNotFound();
      if (target.accountRole === role) return memberView(target, user);
      if (role === 'member' && isLastOwner(rows, target)) throw lastOwner();
      await this.users.setAccountRole(db, target.id, role);
      return memberView({ ...target, accountRole: role }, user);
    });
  }

  /**
   * Removes a user of the account by an owner, the owner themselves included while another owner
   * remains.
   */
  async removeMember(user: UserRow, id: string): Promise<Removal> {
    if (user.accountRole !== 'owner') throw ownerRequired();
    const removed = await this.remove(accountOf(user), id, (rows) => requireOwnerIn(rows, user));
    return {
      revoked_api_keys: removed.revokedKeys,
      access_tokens_to_roll: await this.tokensToRoll(user, removed.tokenChanges),
    };
  }

  /** The user leaves their account themselves, whatever their role; the last owner stays. */
  async leave(user: UserRow): Promise<void> {
    await this.remove(accountOf(user), user.id, () => undefined);
  }

  /**
   * The removed member's recent token changes that are still active tokens of the account, as
   * the owner's key lists them. Tokens are shared by production apps: they are listed for the
   * owner to roll, never rolled here. Billing not answering the list leaves them unnamed rather
   * than failing a removal already made.
   */
  private async tokensToRoll(user: UserRow, changes: TokenChangeRow[]): Promise<TokenToRoll[]> {
    if (changes.length === 0) return [];
    const listed = await this.keys
      .json<{ items: Array<{ id: string; name: string; network: string; hint: string }> }>(
        user,
        'billing',
        'GET',
        '/access-tokens',
        { query: 'limit=200' },
      )
      .catch(() => undefined);
    const active = new Map(listed?.items.map((token) => [token.id, token]));
    return changes
      .filter((change) => !listed || active.has(change.tokenId))
      .map((change) => {
        const token = active.get(change.tokenId);
        return {
          id: change.tokenId,
          name: token?.name ?? null,
          network: token?.network ?? null,
          hint: token?.hint ?? null,
          change: change.change,
          at: change.at.toISOString(),
        };
      });
  }

  /**
   * Under the account's row locks: the last owner is never removed (409 `last_owner`), even by
   * two removals at once. Their key, then every key they made, is revoked in billing first;
   * billing refusing leaves the user in place (503; a retry revokes again, billing's 404 and empty
   * list count as done), so no removed user's key stays usable. Deleting the row ends their
   * sessions.
   */
  private async remove(
    accountId: string,
    id: string,
    allowed: (rows: UserRow[]) => void,
  ): Promise<{ revokedKeys: string[]; tokenChanges: TokenChangeRow[] }> {
    const since = new Date(this.clock.now().getTime() - RECENT_TOKEN_CHANGES_MS);
    return this.users.withAccountLocked(accountId, async (db, rows) => {
      allowed(rows);
      const target = rows.find((row) => row.id === id);
      if (!target) throw memberNotFound();
      if (isLastOwner(rows, target)) throw lastOwner();
      // Their own key first: once it is revoked it makes no more keys, so the sweep of the keys
      // they made (and those made with them) that follows misses none.
      const revokedKeys =
        target.apiKeyId && !(await this.managedKeys.revoke(accountId, target.apiKeyId))
          ? undefined
          : await this.managedKeys.revokeMadeBy(accountId, target.id);
      if (!revokedKeys)
        throw new DomainError(
          'upstream_unavailable',
          'unavailable',
          "billing did not revoke the member's keys; nothing was removed, try again",
        );
      // Read before the row goes: the changes go with it.
      const tokenChanges = await this.tokenChanges.ofUserSince(db, target.id, since);
      await this.users.delete(db, target.id);
      return { revokedKeys, tokenChanges };
    });
  }
}
