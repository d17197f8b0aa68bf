import {
  All,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  Post,
  Req,
  Res,
  UseGuards,
} from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { CurrentSession } from '../auth/auth.service';
import { Current, CustomerGuard } from '../auth/session.guard';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { parseBody } from '../http-validation';
import { passedHeaders, type Upstream } from '../upstream/upstream.client';
import { UsersRepository } from '../auth/users.repository';
import { TeamService } from '../team/team.service';
import { withActorEmails } from '../team/actor-emails';
import { CHANGES_ITS_PLAN, ownerRequired } from '../team/owner-required';
import { ACCOUNT_KEY_SCOPES } from '../upstream/managed-keys';
import { AccountKeyService } from './account-key.service';
import { networkEndpoints } from './endpoints';
import { relayRuleFor } from './relay-rules';

const UPSTREAMS: readonly Upstream[] = ['billing', 'webhooks', 'audit'];
const apiKeyBody = z.strictObject({
  name: z.string().trim().min(1).max(100).optional(),
  scopes: z.array(z.enum(ACCOUNT_KEY_SCOPES)).min(1).max(ACCOUNT_KEY_SCOPES.length),
});

interface ApiKeyView {
  id: string;
  name: string | null;
  scopes: string[];
  hint: string;
  created_at: string;
  /** Billing's label of who made the key: the dashboard user's id (ADR 0604). */
  created_by: string | null;
}

/** The customer's side of the BFF: the REST APIs with the account's own key, nothing else. */
@Controller('api')
@UseGuards(CustomerGuard)
export class CustomerController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly keys: AccountKeyService,
    private readonly users: UsersRepository,
    private readonly team: TeamService,
  ) {}

  @Get('networks')
  networks() {
    return {
      items: networkEndpoints(this.config.PUBLIC_RPC_URLS, this.config.PUBLIC_GRPC_ADDRESSES),
      account_url: this.config.PUBLIC_ACCOUNT_URL ?? this.config.BILLING_API_URL,
      webhooks_url: this.config.PUBLIC_WEBHOOKS_URL ?? this.config.WEBHOOKS_API_URL,
      audit_url: this.config.PUBLIC_AUDIT_URL ?? this.config.AUDIT_API_URL,
    };
  }

  /**
   * The account's API keys except the one the dashboard itself uses, each with who made it
   * (`created_by_email`: a user of the account; null when made outside the dashboard).
   */
  @Get('api-keys')
  async listKeys(@Current() current: CurrentSession) {
    const [list, members] = await Promise.all([
      this.keys.json<{ items: ApiKeyView[] }>(current.user, 'billing', 'GET', '/api-keys', {
        query: 'limit=200',
      }),
      this.users.ofAccount(current.user.accountId!),
    ]);
    const emails = new Map(members.map((member) => [member.id, member.email]));
    return {
      items: list.items
        .filter((key) => key.id !== current.user.apiKeyId)
        .map((key) => ({
          ...key,
          created_by_email: key.created_by ? (emails.get(key.created_by) ?? null) : null,
        })),
    };
  }

  /**
   * A key made with the user's own (managed) key, labelled with the user in billing: removing
   * them from the team revokes it, and every key made with it (ADR 0604). The `plan` scope
   * changes the account's plan, an owner's action: a member's request for it is refused here
   * (403 `owner_required`, as the relay's plan rule), before billing is asked, since the user's
   * managed key holds every scope.
   */
  @Post('api-keys')
  @HttpCode(201)
  async createKey(@Current() current: CurrentSession, @Body() body: unknown) {
    const asked = parseBody(apiKeyBody, body);
    if (asked.scopes.includes('plan') && current.user.accountRole !== 'owner')
      // Said under the page's Scopes (a page loaded before its user was made a member offers it).
      throw ownerRequired(CHANGES_ITS_PLAN, {
        scopes: 'only an owner of the account may give a key the Plan scope; uncheck Plan',
      });
    const created = await this.keys.json<ApiKeyView>(current.user, 'billing', 'POST', '/api-keys', {
      body: { ...asked, created_by: current.user.id },
    });
    return { ...created, created_by_email: current.user.email };
  }

  @Delete('api-keys/:id')
  @HttpCode(204)
  async deleteKey(@Current() current: CurrentSession, @Param('id') id: string) {
    if (id === current.user.apiKeyId)
      throw new DomainError('not_found', 'not_found', 'no such API key');
    await this.keys.json(current.user, 'billing', 'DELETE', `/api-keys/${encodeURIComponent(id)}`);
  }

  /** `/api/relay/<upstream>/<path>` → that API's `<path>`, if RELAY_RULES allow it. */
  @All('relay/*')
  async relay(
    @Current() current: CurrentSession,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    const [pathname, query] = splitUrl(request.url);
    const match = /^\/api\/relay\/([a-z]+)(\/.*)$/.exec(pathname);
    const upstream = match?.[1] as Upstream | undefined;
    const path = match?.[2];
    const rule =
      upstream && path && UPSTREAMS.includes(upstream)
        ? relayRuleFor(upstream, request.method, path)
        : undefined;
    if (!upstream || !path || !rule)
      throw new DomainError('not_found', 'not_found', 'no such route');
    if (rule.ownerOnly && current.user.accountRole !== 'owner') throw ownerRequired(rule.ownerOnly);
    // A 401 (the account's stored key refused) is the key service's: renewed once, else 503.
    const body = ['POST', 'PUT', 'PATCH'].includes(request.method)
      ? (request.body ?? {})
      : undefined;
    const answer = await this.keys.call(current.user, upstream, request.method, path, {
      query,
      body: rule.namesActor && isObject(body) ? { ...body, created_by: current.user.id } : body,
      headers: passedHeaders(request.headers),
    });
    // Who made or rolled an access token, for a removal of them to list (ADR 0604).
    if (upstream === 'billing' && request.method === 'POST' && answer.status < 300)
      await this.team.noteTokenChange(current.user, path, answer.body);
    void reply.status(answer.status).headers(answer.headers ?? {});
    if (answer.status === 204 || answer.body === null) return reply.send();
    if (rule.namesActor && request.method === 'GET' && answer.status === 200)
      return reply.send(await this.withActorEmails(current, answer.body));
    return reply.send(answer.body);
  }

  /** A list's items with who acted as a person (`withActorEmails`, ADR 0604). */
  private async withActorEmails(current: CurrentSession, body: unknown): Promise<unknown> {
    const members = await this.users.ofAccount(current.user.accountId!);
    return withActorEmails(body, new Map(members.map((member) => [member.id, member.email])));
  }
}

function splitUrl(url: string): [string, string | undefined] {
  const at = url.indexOf('?');
  return at < 0 ? [url, undefined] : [url.slice(0, at), url.slice(at + 1) || undefined];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
