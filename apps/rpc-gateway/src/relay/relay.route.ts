import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { GatewayMetrics } from '../observability/gateway-metrics';
import type { RelayService } from './relay.service';

/**
 * `POST /<token>` and `POST /<token>/` as raw fastify routes (no Nest pipeline on the hot path).
 * The body is taken as text so ids and params keep their exact bytes. Every other path and
 * method falls through to the 404 JSON answer of the HTTP edge; there is no GET form.
 */
export function registerRelayRoutes(
  fastify: FastifyInstance,
  relay: RelayService,
  metrics: GatewayMetrics,
  logger: Logger,
  requestLogs: boolean,
): void {
  void fastify.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) =>
      done(null, body),
    );
    const handler = async (
      request: { params: unknown; body: unknown; id: string },
      reply: {
        code(n: number): unknown;
        header(k: string, v: string): unknown;
        send(b: string): unknown;
      },
    ) => {
      const started = performance.now();
      const { token } = request.params as { token: string };
      const body = typeof request.body === 'string' ? request.body : '';
      const answer = await relay.handleHttp(token, body);
      reply.code(answer.status);
      reply.header('content-type', 'application/json');
      if (answer.headers)
        for (const [name, value] of Object.entries(answer.headers)) reply.header(name, value);
      const seconds = (performance.now() - started) / 1000;
      metrics.requests.inc({ transport: 'http', status: String(answer.status) });
      metrics.requestDuration.observe({ transport: 'http' }, seconds);
      if (requestLogs) {
        logger.info(
          {
            request_id: request.id,
            network: answer.network,
            account: answer.account,
            calls: answer.calls,
            status: answer.status,
            ms: Math.round(seconds * 1e4) / 10,
          },
          'rpc request',
        );
      }
      return reply.send(answer.body);
    };
    scope.post('/:token', handler as never);
    scope.post('/:token/', handler as never);
  });
}
