import request from 'supertest';
import { silentLogger } from '../logging/logger';
import {
  FIXED_NOW,
  indexObjects,
  runtimeStateFor,
  syncedSource,
} from '../../test/support/controller-fixtures';
import { eventLoopDelayMinimum, firstSampledEventLoopDelay } from '../../test/support/event-loop-delay-gauge';
import { createControllerMetrics } from './metrics';
import { createControllerApp } from './http/app';

// The controller's event-loop delay is sampled while it works (logging/event-loop-delay.ts): an API
// request starts the sampling, the kubelet's probes and Prometheus's scrapes do not.

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop' },
  spec: { template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web' }] } } },
};

describe('controller metrics: event-loop delay while working', () => {
  it('starts sampling on an admission check, not on probes or scrapes', async () => {
    const cluster = indexObjects([]);
    const metrics = createControllerMetrics(cluster.index, () => runtimeStateFor(cluster, syncedSource()));
    const app = createControllerApp({
      index: cluster.index,
      runtimeState: () => runtimeStateFor(cluster, syncedSource()),
      configuredDetailLevel: 'summary',
      clock: () => FIXED_NOW,
      logger: silentLogger(),
      requestObserver: metrics.requestObserver,
      metricsHandler: metrics.handler,
    });

    await request(app).get('/healthz').expect(200);
    await request(app).get('/readyz').expect(200);
    await request(app).get('/metrics?name=x').expect(200);
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(await eventLoopDelayMinimum(metrics.registry)).toBe(0);

    await request(app).post('/api/v1/admission-check').send({ object: deployment }).expect(200);
    // Sampling every 100 ms since then: each interval lasts at least that long.
    expect(await firstSampledEventLoopDelay(metrics.registry)).toBeGreaterThanOrEqual(0.09);
  });
});
