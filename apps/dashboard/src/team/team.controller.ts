import { Body, Controller, Delete, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import type { CurrentSession } from '../auth/auth.service';
import { Current, CustomerGuard } from '../auth/session.guard';
import { parseBody } from '../http-validation';
import { TeamService } from './team.service';

const teamInvitationBody = z.strictObject({
  email: z.string().trim().toLowerCase().max(254).email('enter a valid email address'),
  role: z.enum(['owner', 'member']).default('member'),
});

/**
 * The Team page's routes (ADR 0604). Any user of the account reads the team; only an owner
 * invites, revokes an invitation and removes a member (403 `owner_required` for a member).
 * Another account's member or invitation answers 404 like an unknown one.
 */
@Controller('api/team')
@UseGuards(CustomerGuard)
export class TeamController {
  constructor(private readonly team: TeamService) {}

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

  @Delete('members/:id')
  @HttpCode(204)
  async removeMember(@Current() current: CurrentSession, @Param('id') memberId: string) {
    await this.team.removeMember(current.user, memberId);
  }
}
