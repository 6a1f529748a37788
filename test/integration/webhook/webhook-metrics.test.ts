import request from 'supertest';
import { silentLogger } from '../../../services/logging/logger';
import { generateSelfSignedBundle } from '../../../services/webhook/certs/self-signed';
import type { ConstraintQueryResult, ConstraintSource } from '../../../services/webhook/controller-client';
import { createWebhookMetrics } from '../../../services/webhook/metrics';
import { createWebhookApp, WebhookHttpsServer } from '../../../services/webhook/server';
import { admissionReview } from './harness';
import { eventLoopDelayMinimum, firstSampledEventLoopDelay } from '../../support/event-loop-delay-gauge';

// `/metrics` of the webhook moves with traffic: outcomes, query results, warnings by severity, and
// the serving certificate's expiry (so an alert can catch a rotation that did not happen).

function metricValue(text: string, name: string, labels: string): number {
  const line = text.split('\n').find((entry) => entry.startsWith(`${name}{${labels}}`));
  if (!line) throw new Error(`no sample ${name}{${labels}} in:\n${text}`);
  return Number(line.split(' ').pop());
}

const pod = {
  group: '',
  version: 'v1',
  kind: 'Pod',
  resource: 'pods',
  object: { metadata: { name: 'web', labels: { app: 'web' } }, spec: { containers: [] } },
};

describe('webhook metrics', () => {
  it('counts outcomes, query results and warnings by severity after real reviews', async () => {
    let next: ConstraintQueryResult = { ok: true, skippedEntries: 0, constraints: [] };
    const source: ConstraintSource = { query: async () => next };
    const metrics = createWebhookMetrics({ processMetrics: false });
    const app = createWebhookApp({
      constraints: source,
      logger: silentLogger(),
      isReady: () => true,
      metrics,
    });

    next = {
      ok: true,
      skippedEntries: 0,
      constraints: [
        {
          name: 'quota',
          severity: 'Critical',
          summary: 'quota nearly full',
          remediationHint: 'ask for more',
        },
        { name: 'deny', severity: 'Warning', summary: 'ingress denied', remediationHint: 'add a policy' },
      ],
    };
    await request(app)
      .post('/validate')
      .send(admissionReview(pod, 'CREATE', 'a'))
      .expect(200);
    next = { ok: true, skippedEntries: 0, constraints: [] };
    await request(app)
      .post('/validate')
      .send(admissionReview(pod, 'CREATE', 'b'))
      .expect(200);
    next = { ok: false, reason: 'timeout', detail: 'no answer in 3 s' };
    await request(app)
      .post('/validate')
      .send(admissionReview(pod, 'CREATE', 'c'))
      .expect(200);
    next = { ok: false, reason: 'unreachable', detail: 'ECONNREFUSED' };
    await request(app)
      .post('/validate')
      .send(admissionReview(pod, 'CREATE', 'd'))
      .expect(200);
    await request(app).post('/validate').set('Content-Type', 'text/plain').send('not a review').expect(200);

    const text = (await request(app).get('/metrics').expect(200)).text;
    const count = (outcome: string) =>
      metricValue(text, 'forewarn_webhook_admission_duration_seconds_count', `outcome="${outcome}"`);
    expect([
      count('warned'),
      count('clean'),
      count('timeout'),
      count('controller_error'),
      count('bad_request'),
    ]).toEqual([1, 1, 1, 1, 1]);
    expect(metricValue(text, 'forewarn_webhook_controller_query_duration_seconds_count', 'result="ok"')).toBe(
      2,
    );
    expect(metricValue(text, 'forewarn_webhook_warnings_total', 'severity="Critical"')).toBe(1);
    expect(metricValue(text, 'forewarn_webhook_warnings_total', 'severity="Warning"')).toBe(1);
    // The four reviews were written the API server's way and handed on whole; the text body was not.
    expect(text).toMatch(/^forewarn_webhook_reviews_forwarded_total 4$/m);
  });

  it('exposes the expiry of the certificate in service', async () => {
    const metrics = createWebhookMetrics({ processMetrics: false });
    const server = new WebhookHttpsServer(() => undefined, silentLogger());
    server.onCertificateChange((notAfter) => metrics.setCertificateExpiry(notAfter));
    const now = new Date();
    const bundle = await generateSelfSignedBundle({
      serviceName: 'svc',
      namespace: 'ns',
      extraSans: [],
      now,
    });
    server.setCertificate(bundle);
    const text = await metrics.registry.metrics();
    const expiry = Number(
      text
        .split('\n')
        .find((line) => line.startsWith('forewarn_webhook_certificate_expiry_timestamp_seconds '))
        ?.split(' ')[1],
    );
    const days = (expiry * 1000 - now.getTime()) / 86_400_000;
    expect(days).toBeGreaterThan(360);
    expect(days).toBeLessThan(367);
  });

  it('samples the event-loop delay once a review arrived, not at rest nor for probes and scrapes', async () => {
    const metrics = createWebhookMetrics();
    const source: ConstraintSource = {
      query: async () => ({ ok: true, skippedEntries: 0, constraints: [] }),
    };
    const app = createWebhookApp({
      constraints: source,
      logger: silentLogger(),
      isReady: () => true,
      metrics,
    });
    // Probes and scrapes are not work: after them, longer than three 100 ms intervals without a sample.
    await request(app).get('/healthz').expect(200);
    await request(app).get('/readyz').expect(200);
    await request(app).get('/metrics').expect(200);
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(await eventLoopDelayMinimum(metrics.registry)).toBe(0);
    await request(app)
      .post('/validate')
      .send(admissionReview(pod, 'CREATE', 'e'))
      .expect(200);
    // Sampling every 100 ms since then: each interval lasts at least that long.
    expect(await firstSampledEventLoopDelay(metrics.registry)).toBeGreaterThanOrEqual(0.09);
  });
});
