import {
  Body,
  Controller,
  Get,
  HttpCode,
  Inject,
  Param,
  Post,
  Put,
  Query,
  UseGuards,
} from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import { PLAN_IDS } from '@meridian/plans';
import type { Clock } from '@meridian/time';
import { z } from 'zod';
import type { CurrentSession } from '../auth/auth.service';
import { newSecret, sha256 } from '../auth/secrets';
import { Current, OperatorGuard } from '../auth/session.guard';
import { UsersRepository } from '../auth/users.repository';
import { CLOCK } from '../clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { AccountKeyService } from '../customer/account-key.service';
import { parseBody } from '../http-validation';
import { InvitationsRepository } from '../settings/invitations.repository';
import { SignupModeService } from '../settings/signup-mode.service';
import { UpstreamClient } from '../upstream/upstream.client';

const planBody = z.strictObject({ plan: z.enum(PLAN_IDS) });
const topUpBody = z.strictObject({ cu: z.number().int().min(1).max(1e12) });
const settingsBody = z.strictObject({ signup_mode: z.enum(['open', 'invite']) });
const invitationBody = z.strictObject({ email: z.string().trim().toLowerCase().email() });
const INVITATION_TTL_MS = 7 * 24 * 3_600_000;

/**
 * The operator's side: accounts of dashboard users (search, open, change plan, credit a top-up,
 * read usage and webhooks). Writes go through billing-ledger's operator API; reads of one
 * account use that account's own key, so no API grows an operator copy of its customer routes.
 */
@Controller('api/operator')
@UseGuards(OperatorGuard)
export class OperatorController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly users: UsersRepository,
    private readonly keys: AccountKeyService,
    private readonly upstream: UpstreamClient,
    private readonly signupMode: SignupModeService,
    private readonly invitations: InvitationsRepository,
  ) {}

  @Get('accounts')
  async search(@Query('q') q: string | undefined) {
    const found = await this.users.searchCustomers((q ?? '').trim().slice(0, 100), 50);
    return {
      items: found.map((user) => ({
        account_id: user.accountId,
        email: user.email,
        created_at: user.createdAt.toISOString(),
      })),
    };
  }

  @Get('accounts/:id')
  async account(@Param('id') id: string) {
    const bearer = await this.keyOfAccount(id);
    const [account, usage, webhooks, topUps] = await Promise.all([
      this.upstream.json('billing', 'GET', '/account', { bearer }),
      this.upstream.json('billing', 'GET', '/account/usage', { bearer, query: 'group_by=day' }),
      this.upstream
        .call('webhooks', 'GET', '/webhooks', { bearer, query: 'limit=200' })
        .catch(() => undefined),
      this.upstream.json('billing', 'GET', '/top-ups', { bearer }),
    ]);
    const user = (await this.users.byAccount(id))!;
    return {
      email: user.email,
      account,
      usage,
      top_ups: topUps,
      // The webhook API may be down or not deployed; the rest of the page still shows.
      webhooks: webhooks?.status === 200 ? webhooks.body : null,
    };
  }

  @Put('accounts/:id/plan')
  async setPlan(@Param('id') id: string, @Body() body: unknown) {
    await this.keyOfAccount(id);
    const { plan } = parseBody(planBody, body);
    return this.upstream.json('billing', 'PUT', `/admin/accounts/${encodeURIComponent(id)}/plan`, {
      bearer: this.config.OPERATOR_TOKEN,
      body: { plan },
    });
  }

  @Post('accounts/:id/top-ups')
  @HttpCode(201)
  async topUp(@Param('id') id: string, @Body() body: unknown) {
    await this.keyOfAccount(id);
    const { cu } = parseBody(topUpBody, body);
    return this.upstream.json(
      'billing',
      'POST',
      `/admin/accounts/${encodeURIComponent(id)}/top-ups`,
      { bearer: this.config.OPERATOR_TOKEN, body: { cu } },
    );
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

  /** The code is shown once (as a sign-up link); only its hash is kept. */
  @Post('invitations')
  @HttpCode(201)
  async invite(@Current() current: CurrentSession, @Body() body: unknown) {
    const { email } = parseBody(invitationBody, body);
    const code = newSecret(24);
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS);
    await this.invitations.insert(sha256(code), email, current.user.id, now, expiresAt);
    return { email, code, expires_at: expiresAt.toISOString() };
  }

  private async keyOfAccount(accountId: string): Promise<string> {
    const user = await this.users.byAccount(accountId);
    if (!user) throw new DomainError('not_found', 'not_found', 'no dashboard account with this id');
    return this.keys.keyOf(user);
  }
}
