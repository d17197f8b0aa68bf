import {
  Body,
  Controller,
  HttpCode,
  Module,
  Post,
  UseGuards,
  type DynamicModule,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { z } from 'zod';
import { OperatorGuard } from '../http/auth.guards';
import { parseBody } from '../http/validation';
import { LedgerTicker } from '../ledger/ledger-ticker.service';
import { AdjustableClock } from './adjustable-clock';

const MAX_ADVANCE_MS = 400 * 24 * 60 * 60_000;

export const advanceClockBody = z.strictObject({
  ms: z.number().int().min(0).max(MAX_ADVANCE_MS),
});

/**
 * Test-only operator route, registered only when `TEST_CLOCK_CONTROL=true` (never in the
 * local stack, deploy manifests or production defaults): moves the ledger's clock forward, then
 * runs one ledger pass so top-ups due by then have cleared and allowances due have been reset
 * when it answers. Not part of the OpenAPI document (REST_CONTROLLERS).
 */
@Controller('api/v1/admin/clock')
@UseGuards(OperatorGuard)
export class TestClockController {
  constructor(
    private readonly clock: AdjustableClock,
    private readonly modules: ModuleRef,
  ) {}

  @Post('advance')
  @HttpCode(200)
  async advance(@Body() body: unknown) {
    const { ms } = parseBody(advanceClockBody, body);
    const now = this.clock.advance(ms);
    await this.modules.get(LedgerTicker, { strict: false }).tick();
    return { now: now.toISOString() };
  }
}

@Module({})
export class TestClockModule {
  /** Wraps the app's root module; `root` must have been built with `clock` as its CLOCK. */
  static around(root: DynamicModule, clock: AdjustableClock): DynamicModule {
    return {
      module: TestClockModule,
      imports: [root],
      controllers: [TestClockController],
      providers: [{ provide: AdjustableClock, useValue: clock }, OperatorGuard],
    };
  }
}
