import { Body, Controller, Headers, HttpCode, Post, UseFilters } from '@nestjs/common';
import { AuditErrorFilter } from '../common/audit-error.filter';
import { WalletAuditService } from './wallet-audit.service';

@Controller('v1/wallet-audit')
@UseFilters(AuditErrorFilter)
export class WalletAuditController {
  constructor(private readonly wallets: WalletAuditService) {}

  @Post('check')
  @HttpCode(200)
  check(@Headers('authorization') authorization: string | undefined, @Body() body: unknown) {
    return this.wallets.check(authorization, body);
  }

  @Post('audit')
  @HttpCode(200)
  audit(@Headers('authorization') authorization: string | undefined, @Body() body: unknown) {
    return this.wallets.audit(authorization, body);
  }
}
