import request from 'supertest';
import { createControllerApp } from '../../../services/controller/http/app';
import {
  conforms,
  fieldsNeverSent,
  openApi,
  pointer,
  responsesNeverAnswered,
  validatorAt,
  type Method,
} from './openapi-contract';
import {
  app,
  controllerApp,
  fullReport,
  LEVELS,
  SAMPLE_URLS,
  controllerDependencies,
  syntheticQuota,
  unsyncedApp,
  withLevel,
} from './openapi-app';
import { checkCallerRbacAnswers, checkVerdictsAndErrors, checkWarningsView } from './openapi-admission-check';
import { checkImpact, checkRisks } from './openapi-risks';

// docs/openapi.yaml is the contract users read; this test holds the code to it. Every route is
// called on the demo cluster at every detail level and in every error case, and each real answer
// is validated (ajv, JSON Schema 2020-12, strict) against the response the document lists for that
// route and status. The schemas forbid unknown fields and require the known ones, and the last
// tests check the other direction (every documented route, status and field really occurs), so a
// The contract checks are in openapi-contract.ts, the app and its cluster in openapi-app.ts.

describe('real responses conform to docs/openapi.yaml', () => {
  it('GET /resources/reports/{namespace} at every detail level, including a namespace without constraints', async () => {
    for (const namespace of ['shop', 'payments', 'monitoring', 'quiet-namespace'])
      for (const level of LEVELS) {
        const response = await request(app).get(withLevel(`/resources/reports/${namespace}`, level));
        expect(response.status).toBe(200);
        conforms('/resources/reports/{namespace}', 'get', response);
        expect(response.body.detailLevel).toBe(level ?? 'full');
      }
    // A caller may lower the configured level, never raise it.
    const capped = await request(controllerApp({ configured: 'summary' })).get(
      '/resources/reports/shop?detail_level=full',
    );
    conforms('/resources/reports/{namespace}', 'get', capped);
    expect(capped.body.detailLevel).toBe('summary');
  });

  /** Whether a report at that level shows the name (names it hides are not looked up either). */
  async function visibleAt(namespace: string, name: string, level: string): Promise<boolean> {
    const report = await request(app).get(`/resources/reports/${namespace}?detail_level=${level}`);
    return (report.body.constraints as Array<{ name: string }>).some((entry) => entry.name === name);
  }

  it('GET /resources/constraints/{namespace}/{name} for every constraint, at every level', async () => {
    for (const namespace of ['shop', 'payments']) {
      const report = await fullReport(namespace);
      expect(report.constraints.length).toBeGreaterThan(0);
      for (const { name } of report.constraints)
        for (const level of LEVELS) {
          const response = await request(app).get(
            withLevel(`/resources/constraints/${namespace}/${name}`, level),
          );
          // Below full, names the level redacts are not found (docs/decisions.md): 404 with an error.
          const visible =
            level === undefined || level === 'full' || (await visibleAt(namespace, name, level));
          expect({ name, level, status: response.status }).toEqual({
            name,
            level,
            status: visible ? 200 : 404,
          });
          conforms('/resources/constraints/{namespace}/{name}', 'get', response);
        }
    }
    // A cluster-scoped constraint is found by its real name at full only.
    const clusterScoped = await request(app)
      .get('/resources/constraints/shop/openapi-cluster-policy/rule?detail_level=full')
      .expect(200);
    conforms('/resources/constraints/{namespace}/{name}', 'get', clusterScoped);
    expect(clusterScoped.body.name).toBe('openapi-cluster-policy/rule');
    const hidden = await request(app)
      .get('/resources/constraints/shop/openapi-cluster-policy/rule?detail_level=detailed')
      .expect(404);
    expect(hidden.body).toEqual({ error: 'constraint shop/openapi-cluster-policy/rule not found' });
    const metrics = await request(app)
      .get('/resources/constraints/shop/openapi-quota?detail_level=detailed')
      .expect(200);
    conforms('/resources/constraints/{namespace}/{name}', 'get', metrics);
    expect(metrics.body.metrics).toEqual(syntheticQuota.metrics);
    const encodedSlash = await request(app)
      .get('/resources/constraints/shop/api-allow-frontend%2Fingress')
      .expect(200);
    conforms('/resources/constraints/{namespace}/{name}', 'get', encodedSlash);
    expect(encodedSlash.body.name).toBe('api-allow-frontend/ingress');
  });

  it('GET /resources/health and /resources/capabilities at every level', async () => {
    for (const level of LEVELS) {
      const health = await request(app).get(withLevel('/resources/health', level)).expect(200);
      conforms('/resources/health', 'get', health);
      expect(health.body.status).toBe('degraded');
      const capabilities = await request(app).get(withLevel('/resources/capabilities', level)).expect(200);
      conforms('/resources/capabilities', 'get', capabilities);
    }
  });

  it('POST /resources for every resource, and its errors', async () => {
    const requests: Array<Record<string, unknown>> = [
      { resource: 'reports', params: { namespace: 'shop' } },
      { resource: 'constraints', params: { namespace: 'shop', name: 'api-allow-frontend/ingress' } },
      {
        resource: 'constraints',
        params: { namespace: 'shop', name: 'openapi-quota', detail_level: 'detailed' },
      },
      { resource: 'health' },
      { resource: 'capabilities', params: {} },
    ];
    for (const body of requests)
      for (const level of LEVELS) {
        const response = await request(app).post(withLevel('/resources', level)).send(body);
        expect(response.status).toBe(200);
        conforms('/resources', 'post', response);
      }
    const post =
      (body: string | object, headers: Record<string, string> = {}) =>
      () =>
        request(app).post('/resources').set(headers).send(body);
    const json = { 'Content-Type': 'application/json' };
    const failures: Array<{ status: number; send: () => request.Test }> = [
      { status: 400, send: post('{"resource":', json) },
      { status: 400, send: post([1, 2]) },
      { status: 400, send: post({ resource: 'reports', params: {} }) },
      { status: 400, send: post({ resource: 'reports', params: 'shop' }) },
      { status: 400, send: post({ resource: 'health', params: { detail_level: 'all' } }) },
      { status: 400, send: post({ resource: 'constraints', params: { namespace: 'shop', name: '../x' } }) },
      { status: 404, send: post({ resource: 'secrets' }) },
      { status: 404, send: post({ resource: 'constraints', params: { namespace: 'shop', name: 'nope' } }) },
      { status: 413, send: post({ resource: 'health', padding: 'x'.repeat(70_000) }) },
      {
        status: 415,
        send: post('{"resource":"health"}', { 'Content-Type': 'application/json; charset=latin-9' }),
      },
      { status: 415, send: post('{}', { ...json, 'Content-Encoding': 'compress' }) },
    ];
    for (const failure of failures) {
      const response = await failure.send();
      expect(response.status).toBe(failure.status);
      conforms('/resources', 'post', response);
    }
  });

  it('GET /api/v1/constraints with every filter, and GET /api/v1/health', async () => {
    for (const url of [
      '/api/v1/constraints?namespace=shop',
      '/api/v1/constraints?namespace=payments',
      '/api/v1/constraints?namespace=quiet-namespace',
      '/api/v1/constraints?namespace=shop&resource=apps/deployments&labels=app=frontend,tier=web',
      '/api/v1/constraints?namespace=shop&resource=pods&labels=',
      `/api/v1/constraints?namespace=shop&resource=apps/deployments&labels=app=api&kind=Deployment&name=api&ports=http,metrics&annotations=${encodeURIComponent('{"team":"shop"}')}`,
    ]) {
      const response = await request(app).get(url).expect(200);
      conforms('/api/v1/constraints', 'get', response);
    }
    const withClusterScoped = await request(app).get('/api/v1/constraints?namespace=shop').expect(200);
    expect(withClusterScoped.body.constraints).toContainEqual(
      expect.objectContaining({ name: 'openapi-cluster-policy/rule', sourceNamespace: null }),
    );
    for (const url of [
      '/api/v1/constraints',
      '/api/v1/constraints?namespace=Not_Valid',
      '/api/v1/constraints?namespace=shop&labels=novalue',
      '/api/v1/constraints?namespace=shop&resource=Bad%20Resource',
      '/api/v1/constraints?namespace=shop&kind=Deployment&name=api&annotations=not-json',
      '/api/v1/constraints?namespace=shop&kind=Deployment&name=Not_A_Name',
    ]) {
      const response = await request(app).get(url).expect(400);
      conforms('/api/v1/constraints', 'get', response);
    }
    const apiHealth = await request(app).get('/api/v1/health').expect(200);
    conforms('/api/v1/health', 'get', apiHealth);
  });

  it('POST /api/v1/admission-check with view=warnings: the entries that become warnings', checkWarningsView);

  it('POST /api/v1/admission-check with verdicts, and its errors', checkVerdictsAndErrors);
  it('GET /resources/risks/{namespace} at every level, and atRiskCount in the report', checkRisks);
  it('POST /api/v1/impact, and its errors', checkImpact);
  it(
    "the webhook's routes answered for a caller's own RBAC: each entry's detailLevel",
    checkCallerRbacAnswers,
  );

  const POD_SPEC = { containers: [{ name: 'web', image: 'web:1' }] };
  it('GET /resources/references/{ref} and the references of redacted names in every list', async () => {
    // Below `full`, a redacted name carries its reference: in reports, and in the webhook API's
    // answers to callers that are not the webhook.
    const summary = await request(app).get('/resources/reports/shop?detail_level=summary').expect(200);
    conforms('/resources/reports/{namespace}', 'get', summary);
    const ref = (summary.body.constraints as Array<{ ref?: string }>).find((entry) => entry.ref)?.ref ?? '';
    expect(ref).toMatch(/^fw-[0-9a-f]{16}$/);
    const redactedApi = createControllerApp({
      ...controllerDependencies({ configured: 'summary' }),
      apiAccess: { levelFor: async () => 'summary' },
    });
    const listed = await request(redactedApi).get('/api/v1/constraints?namespace=shop').expect(200);
    conforms('/api/v1/constraints', 'get', listed);
    expect(listed.body.constraints).toContainEqual(expect.objectContaining({ name: 'redacted', ref }));
    const checked = await request(redactedApi)
      .post('/api/v1/admission-check')
      .send({
        operation: 'CREATE',
        object: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'web', namespace: 'shop' },
          spec: POD_SPEC,
        },
      })
      .expect(200);
    conforms('/api/v1/admission-check', 'post', checked);
    expect(checked.body.constraints).toContainEqual(
      expect.objectContaining({ name: 'redacted', ref: expect.stringMatching(/^fw-/) }),
    );

    const found = await request(app).get(`/resources/references/${ref}`).expect(200);
    conforms('/resources/references/{ref}', 'get', found);
    expect(found.body).toMatchObject({ ref, name: expect.not.stringMatching(/^redacted$/) });
    for (const [url, status] of [
      [`/resources/references/${ref}?detail_level=detailed`, 403],
      ['/resources/references/fw-0000000000000000', 404],
      ['/resources/references/require-requests', 400],
      [`/resources/references/${ref}?detail_level=everything`, 400],
    ] as const) {
      const response = await request(app).get(url);
      expect({ url, status: response.status }).toEqual({ url, status });
      conforms('/resources/references/{ref}', 'get', response);
    }
    const unsynced = await request(unsyncedApp).get(`/resources/references/${ref}`).expect(503);
    conforms('/resources/references/{ref}', 'get', unsynced);
    const posted = await request(app)
      .post('/resources')
      .send({ resource: 'references', params: { ref } })
      .expect(200);
    conforms('/resources', 'post', posted);
    expect(posted.body).toEqual(found.body);
    const below = { resource: 'references', params: { ref, detail_level: 'detailed' } };
    conforms('/resources', 'post', await request(app).post('/resources').send(below).expect(403));
  });

  it('GET /healthz, /readyz and /metrics', async () => {
    conforms('/healthz', 'get', await request(app).get('/healthz').expect(200));
    conforms('/readyz', 'get', await request(app).get('/readyz').expect(200));
    const metrics = await request(app).get('/metrics').expect(200);
    conforms('/metrics', 'get', metrics);
    expect(metrics.text).toMatch(/^forewarn_constraints\{type="NetworkIngress"[^}]*\} \d+$/m);
    expect(metrics.text).toMatch(/^forewarn_health_status\{status="degraded"\} 1$/m);
  });

  it('400 for invalid path parameters and detail levels on the GET resources', async () => {
    const cases: Array<[string, string]> = [
      ['/resources/reports/{namespace}', '/resources/reports/Not_A_Namespace'],
      ['/resources/reports/{namespace}', `/resources/reports/${'a'.repeat(64)}`],
      ['/resources/reports/{namespace}', '/resources/reports/shop?detail_level=everything'],
      ['/resources/constraints/{namespace}/{name}', '/resources/constraints/shop/bad%20name'],
      ['/resources/constraints/{namespace}/{name}', '/resources/constraints/shop/a//b'],
      ['/resources/constraints/{namespace}/{name}', '/resources/constraints/Shop/default-deny-ingress'],
      ['/resources/health', '/resources/health?detail_level=everything'],
      ['/resources/capabilities', '/resources/capabilities?detail_level=everything'],
    ];
    for (const [template, url] of cases) {
      const response = await request(app).get(url);
      expect({ url, status: response.status }).toEqual({ url, status: 400 });
      conforms(template, 'get', response);
    }
  });

  it('404 with the spec error text for a missing constraint, and a JSON 404 for unknown routes', async () => {
    const missing = await request(app).get('/resources/constraints/shop/no-such-policy').expect(404);
    conforms('/resources/constraints/{namespace}/{name}', 'get', missing);
    expect(missing.body).toEqual({ error: 'constraint shop/no-such-policy not found' });
    const errorSchema = validatorAt(pointer('components', 'schemas', 'Error'));
    for (const url of [
      '/nothing/here',
      '/resources/reports/',
      '/resources/constraints/shop',
      '/api/v2/health',
    ]) {
      const response = await request(app).get(url).expect(404);
      expect(errorSchema(response.body)).toBe(true);
    }
    const badEncoding = await request(app).get('/resources/reports/%E0%A4%A').expect(400);
    expect(errorSchema(badEncoding.body)).toBe(true);
  });
  it('405 with an Allow header for every other method on every route', async () => {
    for (const [template, item] of Object.entries(openApi.paths)) {
      const url = SAMPLE_URLS[template];
      expect({ template, url }).toEqual({ template, url: expect.any(String) });
      const documentedMethod: Method = item.get ? 'get' : 'post';
      const otherMethods = (['get', 'post', 'put', 'patch', 'delete'] as const).filter(
        (method) => method !== documentedMethod,
      );
      for (const method of otherMethods) {
        const response = await request(app)[method](url);
        expect({ template, method, status: response.status }).toEqual({ template, method, status: 405 });
        conforms(template, documentedMethod, response);
      }
    }
  });
  it('503 before the first sync on every route that waits for it', async () => {
    const waiting: Array<[string, string]> = [
      ['/resources/reports/{namespace}', '/resources/reports/shop'],
      ['/resources/constraints/{namespace}/{name}', '/resources/constraints/shop/default-deny-ingress'],
      ['/resources/health', '/resources/health'],
      ['/resources/capabilities', '/resources/capabilities'],
      ['/api/v1/constraints', '/api/v1/constraints?namespace=shop'],
      ['/api/v1/health', '/api/v1/health'],
      ['/readyz', '/readyz'],
    ];
    for (const [template, url] of waiting) {
      const response = await request(unsyncedApp).get(url);
      expect({ url, status: response.status }).toEqual({ url, status: 503 });
      conforms(template, 'get', response);
    }
    for (const body of [{ resource: 'health' }, { resource: 'reports', params: { namespace: 'shop' } }]) {
      const response = await request(unsyncedApp).post('/resources').send(body).expect(503);
      conforms('/resources', 'post', response);
    }
    conforms('/healthz', 'get', await request(unsyncedApp).get('/healthz').expect(200));
  });
});
// Run last (jest runs a file's tests in order): what the document promises really occurs.
describe('docs/openapi.yaml promises nothing the code does not do', () => {
  it('every documented route and status was answered by the app above', () => {
    expect(responsesNeverAnswered()).toEqual([]);
  });
  it('every documented field of every response schema was sent by the app above', () => {
    expect(fieldsNeverSent()).toEqual([]);
  });
});
