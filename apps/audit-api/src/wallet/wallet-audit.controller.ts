import { Body, Controller, Headers, HttpCode, Post, Query, UseFilters } from '@nestjs/common';
import { AuditErrorFilter } from '../common/audit-error.filter';
import { WalletAuditService } from './wallet-audit.service';
import { walletAuditResponseSchema, walletCheckResponseSchema } from './audit-response.schemas';
import { walletRequestSchema } from '../common/audit-request.schemas';
import { ApiRoute } from '@meridian/platform-http/openapi';
import { ROUTE_ERRORS } from '../common/route-errors';

@Controller('v1/wallet-audit')
@UseFilters(AuditErrorFilter)
export class WalletAuditController {
  constructor(private readonly wallets: WalletAuditService) {}

  @Post('check')
  @ApiRoute({
    summary: 'Wallet risk (quick): status, probabilityFraud, forensic_details, sanctionData',
    body: walletRequestSchema,
    responses: {
      200: { description: 'the verdict', schema: walletCheckResponseSchema },
      ...ROUTE_ERRORS.wallet,
    },
  })
  @HttpCode(200)
  check(
    @Headers('authorization') authorization: string | undefined,
    @Body() body: unknown,
    @Query() query: unknown,
  ) {
    return this.wallets.check(authorization, { body, query });
  }

  @Post('audit')
  @ApiRoute({
    summary: 'Wallet audit (full profile): the risk fields plus behaviour',
    body: walletRequestSchema,
    responses: {
      200: { description: 'the profile', schema: walletAuditResponseSchema },
      ...ROUTE_ERRORS.wallet,
    },
  })
  @HttpCode(200)
  audit(
    @Headers('authorization') authorization: string | undefined,
    @Body() body: unknown,
    @Query() query: unknown,
  ) {
    return this.wallets.audit(authorization, { body, query });
  }
}
