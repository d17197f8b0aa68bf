import { Controller, Get, Headers, Query, UseFilters } from '@nestjs/common';
import { AuthService } from '../auth/auth.service';
import { AuditErrorFilter } from '../common/audit-error.filter';
import { refuseQuery } from '../common/audit-request';
import { quotaResponseSchema } from '../wallet/audit-response.schemas';
import { QuotaService } from './quota.service';
import { ApiRoute } from '@meridian/platform-http/openapi';
import { ROUTE_ERRORS } from '../common/route-errors';

/** `GET /v1/quota`: `{limit, used, resets_at}` of today's audit checks, for the key's account. */
@Controller('v1/quota')
@UseFilters(AuditErrorFilter)
export class QuotaController {
  constructor(
    private readonly auth: AuthService,
    private readonly quota: QuotaService,
  ) {}

  @Get()
  @ApiRoute({
    summary: "Today's use of the daily check quota (costs no check)",
    responses: {
      200: { description: '{limit, used, resets_at}', schema: quotaResponseSchema },
      ...ROUTE_ERRORS.quota,
    },
  })
  async today(
    @Headers('authorization') authorization: string | undefined,
    @Query() query: unknown,
  ) {
    const principal = await this.auth.authenticate(authorization);
    refuseQuery(query);
    return this.quota.today(principal);
  }
}
