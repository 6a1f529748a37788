import request from 'supertest';
import { conforms } from './openapi-contract';
import { app, callerRbacApp, controllerDependencies, LEVELS, unsyncedApp, withLevel } from './openapi-app';
import { createControllerApp } from '../../../services/controller/http/app';
import { RequestBudget } from '../../../services/controller/check/request-budget';

// The workloads-at-risk and impact cases of openapi.test.ts (issue 35), run in that file so that its
// last tests see every answer: real requests to the demo app, validated against docs/openapi.yaml.

const requireTeamLabel = {
  apiVersion: 'kyverno.io/v1',
  kind: 'ClusterPolicy',
  metadata: { name: 'require-team-label' },
  spec: {
    validationFailureAction: 'Enforce',
    rules: [
      {
        name: 'team',
        match: { any: [{ resources: { kinds: ['Deployment'] } }] },
        validate: { message: 'a team label is required', pattern: { metadata: { labels: { team: '?*' } } } },
      },
    ],
  },
};

const auditOwnerLabel = {
  apiVersion: 'kyverno.io/v1',
  kind: 'Policy',
  metadata: { name: 'owner-label', namespace: 'payments' },
  spec: {
    validationFailureAction: 'Audit',
    rules: [
      {
        name: 'owner',
        match: { any: [{ resources: { kinds: ['Deployment'] } }] },
        validate: {
          message: 'an owner label is required',
          pattern: { metadata: { labels: { owner: '?*' } } },
        },
      },
    ],
  },
};

export async function checkRisks(): Promise<void> {
  let workloads = 0;
  for (const namespace of ['shop', 'payments', 'monitoring', 'no-such-namespace'])
    for (const level of LEVELS) {
      const response = await request(app)
        .get(withLevel(`/resources/risks/${namespace}`, level))
        .expect(200);
      conforms('/resources/risks/{namespace}', 'get', response);
      workloads += (response.body as { workloads: unknown[] }).workloads.length;
      const report = await request(app)
        .get(withLevel(`/resources/reports/${namespace}`, level))
        .expect(200);
      conforms('/resources/reports/{namespace}', 'get', report);
      expect(report.body.atRiskCount).toBe(response.body.atRiskCount);
    }
  expect(workloads).toBeGreaterThan(0);
  const callerAnswer = await request(callerRbacApp)
    .get('/resources/risks/shop')
    .set('Authorization', 'Bearer caller');
  expect(callerAnswer.status).toBe(200);
  conforms('/resources/risks/{namespace}', 'get', callerAnswer);
  const posted = await request(app)
    .post('/resources')
    .send({ resource: 'risks', params: { namespace: 'shop' } });
  expect(posted.status).toBe(200);
  conforms('/resources', 'post', posted);
  const bad = await request(app).get('/resources/risks/Shop').expect(400);
  conforms('/resources/risks/{namespace}', 'get', bad);
  const waiting = await request(unsyncedApp).get('/resources/risks/shop').expect(503);
  conforms('/resources/risks/{namespace}', 'get', waiting);
}

export async function checkImpact(): Promise<void> {
  const post = (body: unknown) =>
    request(app)
      .post('/api/v1/impact')
      .send(body as object);
  const answered = await post({
    objects: [
      requireTeamLabel,
      auditOwnerLabel,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } },
    ],
  }).expect(200);
  conforms('/api/v1/impact', 'post', answered);
  const body = answered.body as {
    proposed: Array<{ problem?: string; namespace?: string }>;
    newlyRejectedCount: number;
    namespaces: Array<{ workloads: Array<{ owner?: unknown }> }>;
  };
  expect(body.newlyRejectedCount).toBeGreaterThan(0);
  expect(body.proposed[1]?.namespace).toBe('payments');
  expect(body.proposed[2]?.problem).toMatch(/not a policy object/);
  expect(body.namespaces.flatMap((entry) => entry.workloads).some((workload) => workload.owner)).toBe(true);
  // A request whose CPU budget is spent once the proposals are read: the workloads are counted.
  const dependencies = controllerDependencies();
  let cpu = 0;
  const spentApp = createControllerApp({
    ...dependencies,
    impact: (objects) => dependencies.impact!(objects, { budget: new RequestBudget(1, () => cpu++) }),
  });
  const cut = await request(spentApp)
    .post('/api/v1/impact')
    .send({ objects: [requireTeamLabel] })
    .expect(200);
  conforms('/api/v1/impact', 'post', cut);
  expect(cut.body.evaluatedWorkloads).toBe(0);
  expect(cut.body.unevaluatedWorkloads).toBeGreaterThan(0);
  expect(cut.body.incomplete).toMatch(/CPU budget of 1 ms/);
  for (const [status, sent] of [
    [400, post({ objects: [] })],
    [400, post({ objects: [{ kind: 'Policy' }] })],
    [415, request(app).post('/api/v1/impact').set('Content-Type', 'text/plain').send('{}')],
    [
      403,
      request(callerRbacApp)
        .post('/api/v1/impact')
        .send({ objects: [requireTeamLabel] }),
    ],
    [
      503,
      request(unsyncedApp)
        .post('/api/v1/impact')
        .send({ objects: [requireTeamLabel] }),
    ],
  ] as const) {
    const response = await sent;
    expect(response.status).toBe(status);
    conforms('/api/v1/impact', 'post', response);
  }
}
