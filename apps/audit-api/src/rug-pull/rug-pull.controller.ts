import { Body, Controller, Headers, HttpCode, Post, UseFilters } from '@nestjs/common';
import { AuditErrorFilter } from '../common/audit-error.filter';
import { RugPullService } from './rug-pull.service';

@Controller('v1/rug-pull')
@UseFilters(AuditErrorFilter)
export class RugPullController {
  constructor(private readonly rugPull: RugPullService) {}

  @Post('check')
  @HttpCode(200)
  check(@Headers('authorization') authorization: string | undefined, @Body() body: unknown) {
    return this.rugPull.check(authorization, body);
  }
}
