import {
  Body,
  Controller,
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
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { parseBody } from '../http-validation';
import { SignupModeService } from '../settings/signup-mode.service';
import { changePasswordBody, signInBody, signUpBody } from './auth.schemas';
import { AuthService, type CurrentSession, type NewSession } from './auth.service';
import { AnyUserGuard, Current } from './session.guard';
import { clearedSessionCookie, readCookie, SESSION_COOKIE, sessionCookie } from './session-cookie';
import type { UserRow } from './users.repository';

const userView = (user: UserRow) => ({
  id: user.id,
  email: user.email,
  role: user.role,
  account_id: user.accountId,
  account_role: user.accountRole,
});

/**
 * Sign-up and sign-in take JSON only (415 otherwise), so a cross-site HTML form cannot post
 * them, and answer the session's CSRF token for the page to send back on every change.
 */
@Controller('api/auth')
export class AuthController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly auth: AuthService,
    private readonly signupMode: SignupModeService,
  ) {}

  @Get('session')
  async session(@Req() request: FastifyRequest) {
    const current = await this.auth.current(readCookie(request.headers.cookie, SESSION_COOKIE));
    const signup_mode = await this.signupMode.mode();
    if (!current) return { signed_in: false, signup_mode };
    return {
      signed_in: true,
      signup_mode,
      user: userView(current.user),
      csrf_token: current.session.csrfToken,
    };
  }

  /** An invitation link's page, on load: the invited email, or that the link is used or expired. */
  @Get('invitations/:code')
  async invitation(@Param('code') code: string) {
    if (code.length > 200)
      throw new DomainError('invitation_unknown', 'not_found', 'this invitation link is unknown');
    return this.auth.invitation(code);
  }

  @Post('sign-up')
  @HttpCode(201)
  async signUp(
    @Body() body: unknown,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const input = parseBody(signUpBody, body);
    const { user, session } = await this.auth.signUp(input, request.ip);
    this.setCookie(reply, session);
    return { user: userView(user), csrf_token: session.csrfToken };
  }

  @Post('sign-in')
  @HttpCode(200)
  async signIn(
    @Body() body: unknown,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const input = parseBody(signInBody, body);
    const session = await this.auth.signIn(input.email, input.password, request.ip);
    this.setCookie(reply, session);
    const current = await this.auth.current(session.token);
    return { user: userView(current!.user), csrf_token: session.csrfToken };
  }

  @Post('sign-out')
  @HttpCode(204)
  @UseGuards(AnyUserGuard)
  async signOut(
    @Current() current: CurrentSession,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    await this.auth.signOut(current.session.idHash);
    void reply.header('set-cookie', clearedSessionCookie(this.config.COOKIE_SECURE));
  }

  @Post('password')
  @HttpCode(204)
  @UseGuards(AnyUserGuard)
  async changePassword(@Current() current: CurrentSession, @Body() body: unknown) {
    const input = parseBody(changePasswordBody, body);
    await this.auth.changePassword(current, input.current_password, input.new_password);
  }

  private setCookie(reply: FastifyReply, session: NewSession): void {
    void reply.header(
      'set-cookie',
      sessionCookie(session.token, session.expiresAt, this.config.COOKIE_SECURE),
    );
  }
}
