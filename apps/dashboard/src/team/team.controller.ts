import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  Patch,
  Post,
  Res,
  UseGuards,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { CurrentSession } from '../auth/auth.service';
import { Current, CustomerGuard } from '../auth/session.guard';
import { clearedSessionCookie } from '../auth/session-cookie';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { parseBody } from '../http-validation';
import { TeamService } from './team.service';

const teamInvitationBody = z.strictObject({
  email: z.string().trim().toLowerCase().max(254).email('enter a valid email address'),
  role: z.enum(['owner', 'member']).default('member'),
});

const memberRoleBody = z.strictObject({ role: z.enum(['owner', 'member']) });

/**
 * The Team page's routes (ADR 0604). Any user of the account reads the team and may leave it;
 * only an owner invites, revokes an invitation, changes a member's role and removes a member
 * (403 `owner_required` for a member). Another account's member or invitation answers 404 like
 * an unknown one.
 */
@Controller('api/team')
@UseGuards(CustomerGuard)
export class TeamController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly team: TeamService,
  ) {}

  @Get()
  async view(@Current() current: CurrentSession) {
    return this.team.view(current.user);
  }

  @Post('invitations')
  @HttpCode(201)
  async invite(@Current() current: CurrentSession, @Body() body: unknown) {
    const { email, role } = parseBody(teamInvitationBody, body);
    return this.team.invite(current.user, email, role);
  }

  @Delete('invitations/:id')
  @HttpCode(204)
  async revokeInvitation(@Current() current: CurrentSession, @Param('id') invitationId: string) {
    await this.team.revokeInvitation(current.user, invitationId);
  }

  /**
   * 200 with the API keys revoked with the member and the access tokens they made or rolled
   * recently, for the owner to roll (ADR 0604 amendment).
   */
  @Delete('members/:id')
  async removeMember(@Current() current: CurrentSession, @Param('id') memberId: string) {
    return this.team.removeMember(current.user, memberId);
  }

  @Patch('members/:id')
  async changeRole(
    @Current() current: CurrentSession,
    @Param('id') memberId: string,
    @Body() body: unknown,
  ) {
    const { role } = parseBody(memberRoleBody, body);
    return this.team.changeRole(current.user, memberId, role);
  }

  /** Leaving ends the user's sessions (their row is gone): the cookie goes too. */
  @Post('leave')
  @HttpCode(204)
  async leave(@Current() current: CurrentSession, @Res({ passthrough: true }) reply: FastifyReply) {
    await this.team.leave(current.user);
    void reply.header('set-cookie', clearedSessionCookie(this.config.COOKIE_SECURE));
  }
}
