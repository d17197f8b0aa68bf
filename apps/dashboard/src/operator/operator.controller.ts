import { DomainError } from '@meridian/errors';
import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Inject,
  Param,
  Post,
  Put,
  Query,
  Req,
  UseGuards,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { PLAN_IDS } from '@meridian/plans';
import type { Clock } from '@meridian/time';
import { z } from 'zod';
import type { CurrentSession } from '../auth/auth.service';
import { newId, newSecret, sha256 } from '../auth/secrets';
import { Current, OperatorGuard } from '../auth/session.guard';
import { UsersRepository } from '../auth/users.repository';
import { CLOCK } from '../clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { parseBody, parseQuery } from '../http-validation';
import { invitationPending } from '../settings/invitation-pending';
import { revokeInvitation } from '../settings/invitation-revoke';
import { InvitationsRepository } from '../settings/invitations.repository';
import { SignupModeService } from '../settings/signup-mode.service';
import { UpstreamClient } from '../upstream/upstream.client';
import { withActorEmails } from '../team/actor-emails';
import { withKeyHolders, type BillingAccountKey } from './account-keys';
import {
  deliveryLogPath,
  operatorReadRefusal,
  operatorWebhookView,
  rawQuery,
  type MatcherWebhook,
} from './account-webhooks';

/**
 * null: no plan (billing-ledger allows it for a team only). Enterprise is refused here: it comes
 * with a contract this route does not carry, and a contract-less enterprise would get the plan's
 * defaults instead of what was agreed (billing-ledger's operator API sets it with one).
 */
const planBody = z.strictObject({
  plan: z
    .enum(PLAN_IDS)
    .nullable()
    .refine((plan) => plan !== 'enterprise', {
      message: "enterprise is set with its contract through billing-ledger's operator API",
    }),
});
const topUpBody = z.strictObject({ cu: z.number().int().min(1).max(1e12) });
const settingsBody = z.strictObject({ signup_mode: z.enum(['open', 'invite']) });
const invitationBody = z.strictObject({ email: z.string().trim().toLowerCase().email() });
const searchQuery = z.strictObject({
  q: z.string().trim().max(200).default(''),
  cursor: z.string().max(100).optional(),
});
/** The account's keys: active ones unless asked (each renewal leaves a revoked dashboard key). */
const keysQuery = z.strictObject({
  state: z.enum(['active', 'revoked', 'all']).default('active'),
  cursor: z.string().max(100).optional(),
});
/** The account's webhooks, newest first, a page at a time (webhook-matcher's cursor). */
const webhooksQuery = z.strictObject({ cursor: z.string().max(100).optional() });
const INVITATION_TTL_MS = 7 * 24 * 3_600_000;
const PAGE = 50;

/** billing-ledger's `GET /admin/accounts` line (its OpenAPI `adminAccountsPage`). */
interface AccountSummary {
  id: string;
  name: string;
  type: string;
  plan: string | null;
  node_owner: boolean;
  created_at: string;
}

const path = (id: string) => `/admin/accounts/${encodeURIComponent(id)}`;

/**
 * The operator's side: every account of billing-ledger however it was made (search, open,
 * change plan, credit a top-up, read usage, top-ups and webhooks), through the operator routes
 * of billing-ledger and webhook-matcher with the operator token. A dashboard user's email is
 * added where the account has one.
 */
@Controller('api/operator')
@UseGuards(OperatorGuard)
export class OperatorController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly users: UsersRepository,
    private readonly upstream: UpstreamClient,
    private readonly signupMode: SignupModeService,
    private readonly invitations: InvitationsRepository,
  ) {}

  private get bearer() {
    return this.config.OPERATOR_TOKEN;
  }

  /**
   * billing-ledger's search (id prefix or account name, newest first, its keyset cursor). On the
   * first page, dashboard users whose email matches come first too: an account's name is the
   * email it signed up with unless the user chose one.
   */
  @Get('accounts')
  async search(@Query() query: unknown) {
    const { q, cursor } = parseQuery(searchQuery, query);
    const params = new URLSearchParams({ q, limit: String(PAGE) });
    if (cursor) params.set('cursor', cursor);
    const [page, byEmail] = await Promise.all([
      this.upstream.json<{ items: AccountSummary[]; next_cursor: string | null }>(
        'billing',
        'GET',
        '/admin/accounts',
        { bearer: this.bearer, query: params.toString() },
      ),
      q && !cursor ? this.users.searchCustomers(q, 20) : Promise.resolve([]),
    ]);
    const listed = new Set(page.items.map((a) => a.id));
    const extra = await Promise.all(
      byEmail
        .filter((user) => user.accountId && !listed.has(user.accountId))
        .map((user) =>
          this.upstream.json<AccountSummary>('billing', 'GET', path(user.accountId!), {
            bearer: this.bearer,
          }),
        ),
    );
    const accounts = [...extra, ...page.items];
    const emails = await this.users.emailsOfAccounts(accounts.map((a) => a.id));
    return {
      items: accounts.map((a) => ({
        account_id: a.id,
        name: a.name,
        email: emails.get(a.id) ?? null,
        type: a.type,
        plan: a.plan,
        created_at: a.created_at,
      })),
      next_cursor: page.next_cursor,
    };
  }

  @Get('accounts/:id')
  async account(@Param('id') id: string) {
    const bearer = this.bearer;
    // The account first: an unknown id is billing's 404, before anything else is asked.
    const account = await this.upstream.json('billing', 'GET', path(id), { bearer });
    const [usage, usageByMethod, topUps, user, members] = await Promise.all([
      this.upstream.json('billing', 'GET', `${path(id)}/usage`, {
        bearer,
        query: 'group_by=day_network',
      }),
      this.upstream.json('billing', 'GET', `${path(id)}/usage`, {
        bearer,
        query: 'group_by=method',
      }),
      this.upstream.json('billing', 'GET', `${path(id)}/top-ups`, { bearer }),
      this.users.byAccount(id),
      this.users.ofAccount(id),
    ]);
    return {
      email: user?.email ?? null,
      account,
      usage,
      usage_by_method: usageByMethod,
      // Who bought each, as the customer's Top up page names them (ADR 0604 amendment).
      top_ups: withActorEmails(topUps, new Map(members.map((member) => [member.id, member.email]))),
    };
  }

  /**
   * The account's webhooks, read-only (support's "my webhook didn't fire"): webhook-matcher's
   * operator read with the operator token, so every account is readable, a dashboard user or
   * not. Billing is asked first: an account it does not know is its 404, as on the account page
   * (the matcher lists nothing for an account it never heard of).
   */
  @Get('accounts/:id/webhooks')
  async webhooks(@Param('id') id: string, @Query() query: unknown) {
    const { cursor } = parseQuery(webhooksQuery, query);
    await this.upstream.json('billing', 'GET', path(id), { bearer: this.bearer });
    const params = new URLSearchParams({ limit: String(PAGE) });
    if (cursor) params.set('cursor', cursor);
    const answer = await this.upstream.call('webhooks', 'GET', `${path(id)}/webhooks`, {
      bearer: this.bearer,
      query: params.toString(),
    });
    if (answer.status !== 200) throw operatorReadRefusal(answer);
    const page = answer.body as { items: MatcherWebhook[]; next_cursor: string | null };
    return { items: page.items.map(operatorWebhookView), next_cursor: page.next_cursor };
  }

  /**
   * One webhook's delivery log as its customer's page reads it: the query passed on as the
   * relay passes it (outcome, since, until, tx_hash, block_number, event_id, cursor, limit), so
   * the same filters, cursor and refusals (400 with the matcher's codes); another account's or
   * an unknown webhook 404. Read-only: no replay, pause or delete from the operator's page.
   */
  @Get('accounts/:id/webhooks/:webhookId/deliveries')
  async deliveries(
    @Param('id') id: string,
    @Param('webhookId') webhookId: string,
    @Req() request: FastifyRequest,
  ) {
    const log = deliveryLogPath(id, webhookId);
    await this.upstream.json('billing', 'GET', path(id), { bearer: this.bearer });
    const answer = await this.upstream.call('webhooks', 'GET', log, {
      bearer: this.bearer,
      query: rawQuery(request.url),
    });
    if (answer.status !== 200) throw operatorReadRefusal(answer);
    return answer.body;
  }

  @Put('accounts/:id/plan')
  async setPlan(@Param('id') id: string, @Body() body: unknown) {
    const { plan } = parseBody(planBody, body);
    return this.upstream.json('billing', 'PUT', `${path(id)}/plan`, {
      bearer: this.bearer,
      body: { plan },
    });
  }

  @Post('accounts/:id/top-ups')
  @HttpCode(201)
  async topUp(
    @Param('id') id: string,
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey?: string,
  ) {
    const { cu } = parseBody(topUpBody, body);
    // Passed through: billing-ledger answers a repeat of the key with the first top-up.
    return this.upstream.json('billing', 'POST', `${path(id)}/top-ups`, {
      bearer: this.bearer,
      body: { cu },
      headers: idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
    });
  }

  /**
   * The account's API keys from billing (managed ones included), each marked when it is the
   * dashboard's own key of a user and with that user's email where the dashboard holds it: how
   * an operator finds a leaked key, the dashboard's included, to revoke it (ADR 0110).
   */
  @Get('accounts/:id/api-keys')
  async apiKeys(@Param('id') id: string, @Query() query: unknown) {
    const { state, cursor } = parseQuery(keysQuery, query);
    const params = new URLSearchParams({ state, limit: String(PAGE) });
    if (cursor) params.set('cursor', cursor);
    const [page, holders] = await Promise.all([
      this.upstream.json<{ items: BillingAccountKey[]; next_cursor: string | null }>(
        'billing',
        'GET',
        `${path(id)}/api-keys`,
        { bearer: this.bearer, query: params.toString() },
      ),
      this.users.keyHoldersOf(id),
    ]);
    return { items: withKeyHolders(page.items, holders), next_cursor: page.next_cursor };
  }

  /**
   * Revokes any key of the account, the dashboard's own included: the dashboard then makes the
   * user a new one at their next call (ADR 0110 amendment). A repeat answers 409
   * `already_revoked` with the time it was revoked (README: billing refuses a repeated revoke,
   * as 404 `not_found`, which read as a wrong id); billing's 404 for a key the account never had
   * passes through.
   */
  @Delete('accounts/:id/api-keys/:keyId')
  @HttpCode(204)
  async revokeApiKey(@Param('id') id: string, @Param('keyId') keyId: string): Promise<void> {
    const key = `${path(id)}/api-keys/${encodeURIComponent(keyId)}`;
    try {
      await this.upstream.json('billing', 'DELETE', key, { bearer: this.bearer });
    } catch (error) {
      if (!(error instanceof DomainError && error.kind === 'not_found')) throw error;
      const revokedAt = await this.revokedAt(id, keyId);
      if (revokedAt === undefined) throw error;
      throw new DomainError('already_revoked', 'conflict', `this key was revoked at ${revokedAt}`, {
        details: { revoked_at: revokedAt },
      });
    }
  }

  /** When the account's key was revoked, from billing's list of its revoked keys (newest first). */
  private async revokedAt(id: string, keyId: string): Promise<string | undefined> {
    let cursor: string | null = null;
    do {
      const params = new URLSearchParams({ state: 'revoked', limit: String(PAGE) });
      if (cursor) params.set('cursor', cursor);
      const page: { items: BillingAccountKey[]; next_cursor: string | null } =
        await this.upstream.json('billing', 'GET', `${path(id)}/api-keys`, {
          bearer: this.bearer,
          query: params.toString(),
        });
      const found = page.items.find((item) => item.id === keyId);
      if (found) return found.revoked_at ?? undefined;
      cursor = page.next_cursor;
    } while (cursor);
    return undefined;
  }

  @Get('settings')
  async settings() {
    return { signup_mode: await this.signupMode.mode() };
  }

  @Put('settings')
  async setSettings(@Body() body: unknown) {
    const { signup_mode } = parseBody(settingsBody, body);
    await this.signupMode.set(signup_mode);
    return { signup_mode };
  }

  /**
   * The code is shown once (as a sign-up link); only its hash is kept. One pending invitation
   * per email (the team invitations' rule, `invitationPending`): a second, or a burst, answers
   * 409 `invitation_pending` naming the pending one, which the operator revokes to make a new link.
   */
  @Post('invitations')
  @HttpCode(201)
  async invite(@Current() current: CurrentSession, @Body() body: unknown) {
    const { email } = parseBody(invitationBody, body);
    // An invitation for an email that has an account could never be used (sign-up answers
    // email_taken): refused here, where the operator can act on it.
    if (await this.users.byEmail(email))
      throw new DomainError('email_taken', 'conflict', 'an account with this email exists', {
        details: {
          fields: { email: 'this email already has an account; they can sign in as they are' },
        },
      });
    const code = newSecret(24);
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS);
    const id = newId('inv');
    const made = await this.invitations.insert(
      sha256(code),
      email,
      current.user.id,
      now,
      expiresAt,
      id,
    );
    if (!made) throw await invitationPending(this.invitations, null, email);
    return { id, email, code, expires_at: expiresAt.toISOString() };
  }

  /** The pending sign-up invitations (not used, revoked, set aside nor expired); never a code. */
  @Get('invitations')
  async pendingInvitations() {
    const pending = await this.invitations.pendingSignUps(this.clock.now());
    return {
      items: pending.map((invitation) => ({
        id: invitation.id,
        email: invitation.email,
        created_at: invitation.createdAt.toISOString(),
        expires_at: invitation.expiresAt.toISOString(),
        created_by: { id: invitation.createdBy.id, email: invitation.createdBy.email },
      })),
    };
  }

  /**
   * Revokes a pending sign-up invitation: its link then says it was revoked, and its sign-up
   * answers 403 `invitation_revoked`. 404 `invitation_not_found` for an id of none (a team's
   * included); a repeat answers 409 `already_revoked` (`revokeInvitation`, a team's rule too).
   */
  @Delete('invitations/:id')
  @HttpCode(204)
  async revokeInvitation(@Param('id') id: string): Promise<void> {
    await revokeInvitation(this.invitations, null, id, this.clock.now());
  }
}
