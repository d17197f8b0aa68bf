import { Controller, Get, Inject, NotFoundException, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Registry } from 'prom-client';
import { buildInfo } from './build-info';
import { METRICS_TEXT, type MetricsText } from './metrics';
import { ReadinessRegistry } from './readiness';

/**
 * The internal routes (/healthz, /readyz, /metrics) answer only when the request's path, as
 * sent, is theirs. The router decodes percent-escapes (`/%6detrics` routes to /metrics), and an
 * Ingress that closes `/metrics` with an Exact rule matches what the controller forwards, which
 * need not be normalised: any other spelling is a 404 here, as an unknown path is.
 */
export function requireExactPath(request: Pick<FastifyRequest, 'method' | 'raw'>, path: string) {
  const raw = request.raw.url ?? '';
  const query = raw.indexOf('?');
  if ((query === -1 ? raw : raw.slice(0, query)) !== path)
    throw new NotFoundException(`Cannot ${request.method} ${raw}`);
}

@Controller()
export class HealthController {
  constructor(
    private readonly readiness: ReadinessRegistry,
    private readonly metrics: Registry,
    @Inject(METRICS_TEXT) private readonly replacedMetrics: MetricsText | null,
  ) {}

  @Get('healthz')
  healthz(@Req() request: FastifyRequest) {
    requireExactPath(request, '/healthz');
    // Which release answers: what a rollout, or a pod left behind by one, is checked with.
    return { status: 'ok', ...buildInfo() };
  }

  @Get('readyz')
  async readyz(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    requireExactPath(request, '/readyz');
    const report = await this.readiness.report();
    // The release beside the checks, as /healthz: a rollout's pod that stays not ready is told
    // from the old ones by what it answers.
    await reply
      .status(report.ready ? 200 : 503)
      .send(
        report.ready
          ? { status: 'ready', checks: report.checks, ...buildInfo() }
          : { status: 'not_ready', failing: report.failing, checks: report.checks, ...buildInfo() },
      );
  }

  @Get('metrics')
  metricsText(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    requireExactPath(request, '/metrics');
    // Set here, not by @Header: that one would also label a 404's JSON body as text.
    void reply.header('Content-Type', 'text/plain; version=0.0.4');
    return this.replacedMetrics ? this.replacedMetrics() : this.metrics.metrics();
  }
}
