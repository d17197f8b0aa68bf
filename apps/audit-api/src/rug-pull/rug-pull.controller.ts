import { Body, Controller, Headers, HttpCode, Post, Query, UseFilters } from '@nestjs/common';
import { AuditErrorFilter } from '../common/audit-error.filter';
import { RugPullService } from './rug-pull.service';
import { rugPullResponseSchema } from '../wallet/audit-response.schemas';
import { rugPullRequestSchema } from '../common/audit-request.schemas';
import { ApiRoute } from '@meridian/platform-http/openapi';
import { ROUTE_ERRORS } from '../common/route-errors';

@Controller('v1/rug-pull')
@UseFilters(AuditErrorFilter)
export class RugPullController {
  constructor(private readonly rugPull: RugPullService) {}

  @Post('check')
  @ApiRoute({
    summary: 'Rug pull checker: token risk indicators and score',
    body: rugPullRequestSchema,
    responses: {
      200: { description: 'the verdict', schema: rugPullResponseSchema },
      ...ROUTE_ERRORS.rugPull,
    },
  })
  @HttpCode(200)
  check(
    @Headers('authorization') authorization: string | undefined,
    @Body() body: unknown,
    @Query() query: unknown,
  ) {
    return this.rugPull.check(authorization, { body, query });
  }
}
