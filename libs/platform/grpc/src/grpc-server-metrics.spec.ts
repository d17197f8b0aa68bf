import { status } from '@grpc/grpc-js';
import { billingV1 } from '@meridian/contracts';
import { Registry } from 'prom-client';
import { GrpcServerMetrics } from './grpc-server-metrics';

describe('GrpcServerMetrics', () => {
  const resolve = billingV1.BillingService.method.resolveAccessToken;

  it('counts and times a call by proto service, method and status name', async () => {
    const registry = new Registry();
    const metrics = new GrpcServerMetrics(registry);
    metrics.record(resolve, status.OK, 0.003);
    metrics.record(resolve, status.OK, 0.2);
    metrics.record(resolve, status.UNAVAILABLE, 0.01);
    const labels = { grpc_service: 'billing.v1.BillingService', grpc_method: 'ResolveAccessToken' };
    const handled = (await registry.getSingleMetric('grpc_server_handled_total')!.get()).values;
    expect(handled).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ labels: { ...labels, grpc_code: 'OK' }, value: 2 }),
        expect.objectContaining({ labels: { ...labels, grpc_code: 'UNAVAILABLE' }, value: 1 }),
      ]),
    );
    const text = await registry.metrics();
    expect(text).toContain(
      'grpc_server_handling_seconds_bucket{le="0.1",grpc_service="billing.v1.BillingService",grpc_method="ResolveAccessToken",grpc_code="OK"} 1',
    );
    expect(text).toContain(
      'grpc_server_handling_seconds_bucket{le="0.25",grpc_service="billing.v1.BillingService",grpc_method="ResolveAccessToken",grpc_code="OK"} 2',
    );
  });

  it('a second server on the same registry shares the series', async () => {
    const registry = new Registry();
    new GrpcServerMetrics(registry).record(resolve, status.OK, 0.001);
    new GrpcServerMetrics(registry).record(resolve, status.OK, 0.001);
    const handled = (await registry.getSingleMetric('grpc_server_handled_total')!.get()).values;
    expect(handled.map((sample) => sample.value)).toEqual([2]);
  });
});
