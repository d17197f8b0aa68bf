import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import type { Clock } from '@meridian/time';
import { newId, newSecret, sha256 } from '../auth/secrets';
import { UsersRepository, type AccountRole, type UserRow } from '../auth/users.repository';
import { ManagedKeys } from '../upstream/managed-keys';
import { CLOCK } from '../clock.token';
import { InvitationsRepository } from '../settings/invitations.repository';

/** How long a team invitation may be used: as the operator's sign-up invitations. */
export const TEAM_INVITATION_TTL_MS = 7 * 24 * 3_600_000;

/** The user's account id; a customer always has one (the schema's CHECK). */
const accountOf = (user: UserRow): string => user.accountId!;

const ownerRequired = () =>
  new DomainError(
    'owner_required',
    'forbidden',
    "only an owner of the account manages its team; ask one of the account's owners",
  );

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
  ) {}

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
    await this.invitations.insert(sha256(code), email, user.id, now, expiresAt, {
      id,
      accountId: accountOf(user),
      accountRole: role,
    });
    return { id, email, role, code, expires_at: expiresAt.toISOString() };
  }

  async revokeInvitation(user: UserRow, id: string): Promise<void> {
    if (user.accountRole !== 'owner') throw ownerRequired();
    if (!(await this.invitations.revokeOfAccount(accountOf(user), id)))
      throw new DomainError(
        'invitation_not_found',
        'not_found',
        'this account has no pending invitation with this id',
      );
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
  async removeMember(user: UserRow, id: string): Promise<void> {
    if (user.accountRole !== 'owner') throw ownerRequired();
    await this.remove(accountOf(user), id, (rows) => requireOwnerIn(rows, user));
  }

  /** The user leaves their account themselves, whatever their role; the last owner stays. */
  async leave(user: UserRow): Promise<void> {
    await this.remove(accountOf(user), user.id, () => undefined);
  }

  /**
   * Under the account's row locks: the last owner is never removed (409 `last_owner`), even by
   * two removals at once. Their key is revoked in billing first; billing refusing leaves the
   * user as they were (503), so no removed user's key stays usable. Deleting the row ends their
   * sessions.
   */
  private async remove(
    accountId: string,
    id: string,
    allowed: (rows: UserRow[]) => void,
  ): Promise<void> {
    await this.users.withAccountLocked(accountId, async (db, rows) => {
      allowed(rows);
      const target = rows.find((row) => row.id === id);
      if (!target) throw memberNotFound();
      if (isLastOwner(rows, target)) throw lastOwner();
      if (target.apiKeyId && !(await this.managedKeys.revoke(accountId, target.apiKeyId)))
        throw new DomainError(
          'upstream_unavailable',
          'unavailable',
          "billing did not revoke the member's key; nothing was removed, try again",
        );
      await this.users.delete(db, target.id);
    });
  }
}
