import { Controller, Get, Header, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Registry } from 'prom-client';
import { METRICS_TEXT, type MetricsText } from './metrics';
import { ReadinessRegistry } from './readiness';

@Controller()
export class HealthController {
  constructor(
    private readonly readiness: ReadinessRegistry,
    private readonly metrics: Registry,
    @Inject(METRICS_TEXT) private readonly replacedMetrics: MetricsText | null,
  ) {}

  @Get('healthz')
  healthz() {
    return { status: 'ok' };
  }

  @Get('readyz')
  async readyz(@Res() reply: FastifyReply) {
    const report = await this.readiness.report();
    await reply
      .status(report.ready ? 200 : 503)
      .send(
        report.ready
          ? { status: 'ready', checks: report.checks }
          : { status: 'not_ready', failing: report.failing, checks: report.checks },
      );
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4')
  metricsText() {
    return this.replacedMetrics ? this.replacedMetrics() : this.metrics.metrics();
  }
}
