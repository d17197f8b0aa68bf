import { Controller, Get, Headers, UseFilters } from '@nestjs/common';
import { AuthService } from '../auth/auth.service';
import { AuditErrorFilter } from '../common/audit-error.filter';
import { QuotaService } from './quota.service';

/** `GET /v1/quota`: `{limit, used, resets_at}` of today's audit checks, for the key's account. */
@Controller('v1/quota')
@UseFilters(AuditErrorFilter)
export class QuotaController {
  constructor(
    private readonly auth: AuthService,
    private readonly quota: QuotaService,
  ) {}

  @Get()
  async today(@Headers('authorization') authorization: string | undefined) {
    return this.quota.today(await this.auth.authenticate(authorization));
  }
}
