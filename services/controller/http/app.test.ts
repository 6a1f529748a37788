import request from 'supertest';
import type { DetailLevel, Report } from '../../model/api';
import { createControllerApp } from './app';
import { silentLogger } from '../../logging/logger';
import type { SourceStatus } from '../sources/source';
import {
  demoClusterObjects,
  FIXED_NOW,
  indexObjects,
  runtimeStateFor,
  syncedSource,
  type IndexedCluster,
} from '../../../test/support/controller-fixtures';

function appFor(
  cluster: IndexedCluster,
  level: DetailLevel = 'summary',
  source: SourceStatus = syncedSource(),
) {
  return createControllerApp({
    index: cluster.index,
    runtimeState: () => runtimeStateFor(cluster, source),
    configuredDetailLevel: level,
    clock: () => FIXED_NOW,
    logger: silentLogger(),
  });
}

const demo = indexObjects(demoClusterObjects());

describe('controller HTTP API', () => {
  it('serves a namespace report with consistent counts, sorted Critical, Warning, Info then name', async () => {
    const response = await request(appFor(demo)).get('/resources/reports/shop').expect(200);
    const report = response.body as Report;
    expect(report).toMatchObject({
      namespace: 'shop',
      schemaVersion: '1',
      detailLevel: 'summary',
      generatedAt: FIXED_NOW.toISOString(),
    });
    expect(report.constraintCount).toBe(report.constraints.length);
    expect(report.criticalCount + report.warningCount + report.infoCount).toBe(report.constraintCount);
    expect(report.constraints.map((entry) => entry.name)).toEqual(
      expect.arrayContaining([
        'default-deny-ingress',
        'api-allow-frontend/ingress',
        'api-allow-frontend/egress',
      ]),
    );
    const rank = { Critical: 0, Warning: 1, Info: 2 };
    const order = report.constraints.map((entry) => [rank[entry.severity], entry.name] as const);
    expect(order).toEqual([...order].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0)));
  });

  it('answers 200 with zero counts and an empty list for a namespace without constraints', async () => {
    const response = await request(appFor(indexObjects([])))
      .get('/resources/reports/empty-ns')
      .expect(200);
    expect(response.body).toMatchObject({
      namespace: 'empty-ns',
      constraintCount: 0,
      criticalCount: 0,
      constraints: [],
    });
  });

  it('rejects an invalid namespace with 400 and a JSON error', async () => {
    const response = await request(appFor(demo)).get('/resources/reports/Not_A_Namespace').expect(400);
    expect(response.body.error).toMatch(/invalid namespace/);
    const tooLong = 'a'.repeat(64);
    await request(appFor(demo)).get(`/resources/reports/${tooLong}`).expect(400);
  });

  it('serves a single constraint whose name contains a slash, in snake_case', async () => {
    const response = await request(appFor(demo, 'full'))
      .get('/resources/constraints/shop/api-allow-frontend/ingress')
      .expect(200);
    expect(response.body).toMatchObject({
      name: 'api-allow-frontend/ingress',
      namespace: 'shop',
      constraint_type: 'NetworkIngress',
      source_kind: 'NetworkPolicy',
      source_api_version: 'networking.k8s.io/v1',
      detail_level: 'full',
      affected_workloads: ['api'],
      metrics: null,
      last_observed: FIXED_NOW.toISOString(),
    });
  });

  it('lists a bare Job as affected, but not a Job its CronJob created (the webhook warns both)', async () => {
    const job = (name: string, ownerReferences?: unknown[]) => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name, namespace: 'shop', ...(ownerReferences ? { ownerReferences } : {}) },
      spec: { template: { metadata: { labels: { app: name } } } },
    });
    const cluster = indexObjects([
      ...demoClusterObjects(),
      job('migrate'),
      job('nightly-report-29001', [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly-report' }]),
    ]);
    const response = await request(appFor(cluster))
      .get('/resources/constraints/shop/default-deny-ingress')
      .expect(200);
    expect(response.body.affected_workloads).toEqual([
      'api',
      'cart-db',
      'frontend',
      'migrate',
      'nightly-report',
    ]);
  });

  it('lists every workload of the namespace as affected by a namespace-wide policy', async () => {
    const response = await request(appFor(demo))
      .get('/resources/constraints/shop/default-deny-ingress')
      .expect(200);
    expect(response.body.affected_workloads).toEqual(['api', 'cart-db', 'frontend', 'nightly-report']);
  });

  it('answers 404 with the spec error text for a missing constraint', async () => {
    const response = await request(appFor(demo))
      .get('/resources/constraints/shop/no-such-policy')
      .expect(404);
    expect(response.body).toEqual({ error: 'constraint shop/no-such-policy not found' });
  });

  it('lets a request lower the detail level but never raise it', async () => {
    const lowered = await request(appFor(demo, 'full'))
      .get('/resources/reports/shop?detail_level=summary')
      .expect(200);
    expect(lowered.body.detailLevel).toBe('summary');
    const raised = await request(appFor(demo, 'summary'))
      .get('/resources/reports/shop?detail_level=full')
      .expect(200);
    expect(raised.body.detailLevel).toBe('summary');
    const invalid = await request(appFor(demo))
      .get('/resources/reports/shop?detail_level=everything')
      .expect(400);
    expect(invalid.body.error).toMatch(/detail_level/);
  });

  it('answers the agent request form with exactly the GET body', async () => {
    const viaGet = await request(appFor(demo)).get('/resources/reports/shop').expect(200);
    const viaPost = await request(appFor(demo))
      .post('/resources')
      .send({ resource: 'reports', params: { namespace: 'shop' } })
      .expect(200);
    expect(viaPost.body).toEqual(viaGet.body);
    const constraint = await request(appFor(demo))
      .post('/resources')
      .send({ resource: 'constraints', params: { namespace: 'shop', name: 'default-deny-ingress' } })
      .expect(200);
    expect(constraint.body.name).toBe('default-deny-ingress');
    const unknown = await request(appFor(demo)).post('/resources').send({ resource: 'secrets' }).expect(404);
    expect(unknown.body.error).toMatch(/unknown resource/);
  });

  it('rejects malformed and oversized agent requests with 400 and 413', async () => {
    const malformed = await request(appFor(demo))
      .post('/resources')
      .set('Content-Type', 'application/json')
      .send('{"resource":')
      .expect(400);
    expect(malformed.body.error).toMatch(/not valid JSON/);
    const oversized = await request(appFor(demo))
      .post('/resources')
      .send({ resource: 'reports', params: { namespace: 'shop', padding: 'x'.repeat(70_000) } })
      .expect(413);
    expect(oversized.body.error).toMatch(/larger than/);
    await request(appFor(demo)).post('/resources').send([1, 2]).expect(400);
  });

  it('refuses writes with 405 and an Allow header, and unknown routes with a JSON 404', async () => {
    const refused = await request(appFor(demo)).delete('/resources/reports/shop').expect(405);
    expect(refused.headers.allow).toBe('GET, HEAD');
    expect(refused.body.error).toMatch(/read-only/);
    const postToHealth = await request(appFor(demo)).post('/resources/health').expect(405);
    expect(postToHealth.body.error).toBeDefined();
    const missing = await request(appFor(demo)).get('/nothing/here').expect(404);
    expect(missing.body.error).toMatch(/no route/);
  });

  it('answers 503 and fails readiness until the first sync', async () => {
    const app = appFor(demo, 'summary', syncedSource({ synced: false }));
    const report = await request(app).get('/resources/reports/shop').expect(503);
    expect(report.body.error).toMatch(/first sync/);
    await request(app).get('/readyz').expect(503);
    await request(app).get('/healthz').expect(200);
    const health = await request(app).get('/resources/health').expect(503);
    expect(health.body.status).toBe('unhealthy');
    const apiHealth = await request(app).get('/api/v1/health').expect(503);
    expect(apiHealth.body).toEqual({ status: 'unhealthy', synced: false });
    await request(app).get('/api/v1/constraints?namespace=shop').expect(503);
  });

  it('serves the webhook list unredacted in camelCase, filtered by resource and labels', async () => {
    const all = await request(appFor(demo)).get('/api/v1/constraints?namespace=shop').expect(200);
    const names = all.body.constraints.map((entry: { name: string }) => entry.name);
    expect(names).toEqual(expect.arrayContaining(['default-deny-ingress', 'api-allow-frontend/ingress']));
    expect(all.body.constraints[0]).toEqual(
      expect.objectContaining({
        constraintType: expect.any(String),
        remediationHint: expect.any(String),
        summary: expect.any(String),
      }),
    );
    const frontend = await request(appFor(demo))
      .get('/api/v1/constraints?namespace=shop&resource=apps/deployments&labels=app=frontend,tier=web')
      .expect(200);
    const frontendNames = frontend.body.constraints.map((entry: { name: string }) => entry.name);
    expect(frontendNames).toContain('default-deny-ingress');
    expect(frontendNames).not.toContain('api-allow-frontend/ingress');
    const configMaps = await request(appFor(demo))
      .get('/api/v1/constraints?namespace=shop&resource=configmaps')
      .expect(200);
    expect(configMaps.body.constraints.map((entry: { name: string }) => entry.name)).not.toContain(
      'default-deny-ingress',
    );
  });

  it('validates the list query', async () => {
    expect((await request(appFor(demo)).get('/api/v1/constraints').expect(400)).body.error).toMatch(
      /namespace is required/,
    );
    await request(appFor(demo)).get('/api/v1/constraints?namespace=shop&labels=novalue').expect(400);
    await request(appFor(demo)).get('/api/v1/constraints?namespace=shop&resource=Bad Resource').expect(400);
  });

  it('sends security headers, no X-Powered-By and no CORS', async () => {
    const response = await request(appFor(demo))
      .get('/resources/health')
      .set('Origin', 'https://evil.example')
      .expect(200);
    expect(response.headers['x-powered-by']).toBeUndefined();
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    expect(response.headers['content-type']).toMatch(/application\/json/);
  });
});
