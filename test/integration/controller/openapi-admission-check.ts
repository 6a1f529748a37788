import request from 'supertest';
import { conforms } from './openapi-contract';
import { createControllerApp } from '../../../services/controller/http/app';
import { app, callerRbacApp, controllerDependencies, unsyncedApp } from './openapi-app';

// The admission-check cases of openapi.test.ts (kept in that file's order, so that its last tests see
// every answer): each sends real requests to the demo app and validates them against docs/openapi.yaml.

/** A Deployment of the demo's `shop` namespace that violates some constraints and passes others. */
const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop' },
  spec: {
    replicas: 5,
    template: {
      metadata: { labels: { app: 'frontend' } },
      spec: { containers: [{ name: 'web', image: 'web:1' }] },
    },
  },
};

/** view=warnings: exactly the entries that become warnings, with only a warning's fields. */
export async function checkWarningsView(): Promise<void> {
  // Warnings are read by whoever applies, not by the webhook: names as the one naming rule gives
  // them to that caller (issue 31), details as the webhook reads them. That is the `detailed` check.
  const detailedApp = createControllerApp({
    ...controllerDependencies({ configured: 'detailed' }),
    apiAccess: { levelFor: async () => 'detailed' },
  });
  const checked = await request(detailedApp)
    .post('/api/v1/admission-check')
    .send({ object: deployment, operation: 'CREATE' })
    .expect(200);
  // The webhook's view: exactly the entries that become warnings, with only a warning's fields.
  const warningsView = await request(app)
    .post('/api/v1/admission-check')
    .send({ object: deployment, operation: 'CREATE', view: 'warnings' })
    .expect(200);
  conforms('/api/v1/admission-check', 'post', warningsView);
  type Entry = {
    name: string;
    severity: string;
    summary: string;
    remediationHint: string;
    verdict: string;
  };
  const warningFields = ({ name, severity, summary, remediationHint, verdict }: Entry) => ({
    name,
    severity,
    summary,
    remediationHint,
    verdict,
  });
  expect(warningsView.body.constraints).toEqual(
    (checked.body.constraints as Entry[])
      .filter((entry) => entry.severity !== 'Info' && entry.verdict !== 'passes')
      .map(warningFields),
  );
  expect(warningsView.body.constraints.length).toBeGreaterThan(0);
}

/** Verdicts in every answer, and every error status the route documents. */
export async function checkVerdictsAndErrors(): Promise<void> {
  const checked = await request(app)
    .post('/api/v1/admission-check')
    .send({ object: deployment, operation: 'CREATE' })
    .expect(200);
  conforms('/api/v1/admission-check', 'post', checked);
  const verdicts = (checked.body.constraints as Array<{ verdict: string; reason?: string }>).map(
    (entry) => entry.verdict,
  );
  expect(verdicts[0]).toBe('violates');
  expect(verdicts).toEqual(expect.arrayContaining(['passes', 'applies', 'unknown']));
  const failures: Array<[number, () => request.Test]> = [
    [
      400,
      () =>
        request(app)
          .post('/api/v1/admission-check')
          .set('Content-Type', 'application/json')
          .send('{"object":'),
    ],
    [400, () => request(app).post('/api/v1/admission-check').send({ operation: 'CREATE' })],
    [
      400,
      () => request(app).post('/api/v1/admission-check').send({ object: deployment, operation: 'DELETE' }),
    ],
    [400, () => request(app).post('/api/v1/admission-check').send({ object: deployment, view: 'all' })],
    // Found by schemathesis: null is not an absent operation.
    [400, () => request(app).post('/api/v1/admission-check').send({ object: deployment, operation: null })],
    [
      400,
      () =>
        request(app)
          .post('/api/v1/admission-check')
          .send({ object: { metadata: {} } }),
    ],
    [
      413,
      () =>
        request(app)
          .post('/api/v1/admission-check')
          .send({ object: { ...deployment, padding: 'x'.repeat(1_100_000) } }),
    ],
    [
      415,
      () =>
        request(app)
          .post('/api/v1/admission-check')
          .set('Content-Type', 'text/plain')
          .send(JSON.stringify({ object: deployment })),
    ],
  ];
  for (const [status, send] of failures) {
    const response = await send();
    expect(response.status).toBe(status);
    conforms('/api/v1/admission-check', 'post', response);
  }
  const waiting = await request(unsyncedApp).post('/api/v1/admission-check').send({ object: deployment });
  expect(waiting.status).toBe(503);
  conforms('/api/v1/admission-check', 'post', waiting);
}

/**
 * A caller's own RBAC (issue 24): the list, the check and the warnings view answered for a bearer
 * token that may read some sources carry each entry's `detailLevel`, as documented.
 */
export async function checkCallerRbacAnswers(): Promise<void> {
  // Over the quota of shop (a source the caller may read): a warning at `full`; the cluster-wide
  // rules it fails stay at `summary`. Standing network rules give no warning (issue 31).
  const memory = { memory: '100Gi' };
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'shop' },
    spec: { containers: [{ name: 'web', image: 'web:1', resources: { requests: memory, limits: memory } }] },
  };
  const asCaller = (call: request.Test) => call.set('authorization', 'Bearer a-caller-token');
  const list = await asCaller(request(callerRbacApp).get('/api/v1/constraints?namespace=shop')).expect(200);
  conforms('/api/v1/constraints', 'get', list);
  for (const view of [undefined, 'warnings']) {
    const checked = await asCaller(request(callerRbacApp).post('/api/v1/admission-check'))
      .send({ object: pod, ...(view ? { view } : {}) })
      .expect(200);
    conforms('/api/v1/admission-check', 'post', checked);
    const levels = (checked.body as { constraints: Array<{ detailLevel?: string }> }).constraints.map(
      (entry) => entry.detailLevel,
    );
    expect(levels).toContain('full');
    expect(levels).toContain('summary');
  }
}
