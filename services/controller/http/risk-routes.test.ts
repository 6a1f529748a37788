import request from 'supertest';
import type { Report } from '../../model/api';
import type { KubernetesObject } from '../../model/kubernetes';
import {
  demoClusterObjects,
  fixtureControllerApp,
  indexObjects,
} from '../../../test/support/controller-fixtures';
import { RiskTracker } from '../risks/risk-tracker';
import { computeImpact, type ImpactOptions, type ImpactReport } from '../risks/impact';
import { DEFAULT_REQUEST_CPU_BUDGET_MS, RequestBudget } from '../check/request-budget';
import type { RisksReport } from '../risks/risk-view';
import { createControllerMetrics } from '../metrics';
import { runtimeStateFor } from '../../../test/support/controller-fixtures';

// `GET /resources/risks/{namespace}`, `atRiskCount` in the report and `POST /api/v1/impact` (issue 35)
// on the demo cluster (examples/manifests).

async function demoWithRisks() {
  const cluster = indexObjects([]);
  const risks = new RiskTracker(cluster.index, { debounceMs: 0, sliceBudgetMs: 5, maxWorkloadsPerSlice: 64 });
  cluster.ingestor.onChange((object, removed) => risks.observe(object, removed));
  for (const object of demoClusterObjects()) cluster.ingestor.upsert(object);
  risks.start();
  await risks.idle();
  const impact = (objects: readonly KubernetesObject[], options?: ImpactOptions) =>
    computeImpact(
      {
        index: cluster.index,
        ingestor: cluster.ingestor,
        workloads: (namespaces) => risks.keptWorkloads(namespaces),
        objectOf: (workload) => risks.objectOf(workload),
      },
      objects,
      options,
    );
  return { cluster, risks, impact };
}

const requireTeamLabel: KubernetesObject = {
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

describe('workloads at risk over HTTP', () => {
  it('serves a namespace risks report consistent with atRiskCount in the namespace report', async () => {
    const { cluster, risks } = await demoWithRisks();
    const app = fixtureControllerApp(cluster, { risks, configuredDetailLevel: 'detailed' });
    const namespaces = cluster.index.knownNamespaces();
    let seen = 0;
    for (const namespace of namespaces) {
      const risksReport = (await request(app).get(`/resources/risks/${namespace}`).expect(200))
        .body as RisksReport;
      const report = (await request(app).get(`/resources/reports/${namespace}`).expect(200))
        .body as Report & {
        atRiskCount: number;
      };
      expect(risksReport).toMatchObject({
        namespace,
        schemaVersion: '1',
        detailLevel: 'detailed',
        evaluated: true,
      });
      expect(report.atRiskCount).toBe(risksReport.atRiskCount);
      expect(risksReport.atRiskCount).toBe(
        risksReport.workloads.filter((w) => w.outcome === 'rejected').length,
      );
      for (const workload of risksReport.workloads) {
        expect(workload.namespace).toBe(namespace);
        expect(workload.findings.length).toBeGreaterThan(0);
        for (const finding of workload.findings) expect(finding.verdict).toBe('violates');
      }
      seen += risksReport.workloads.length;
    }
    // The demo cluster has workloads that fail its own policies (examples/manifests/workloads.yaml).
    expect(seen).toBeGreaterThan(0);
  });

  // The naming rule of the views (docs/decisions.md, issue 31): below full, a policy of another
  // namespace is named only when it is an admission policy that rejects or warns (the API server
  // names it to the caller anyway); one that only audits stays redacted.
  it('names no auditing policy of another namespace below full: the same workloads, redacted findings', async () => {
    const { cluster, risks } = await demoWithRisks();
    const app = fixtureControllerApp(cluster, { risks, configuredDetailLevel: 'full' });
    let hidden = 0;
    for (const namespace of cluster.index.knownNamespaces()) {
      const full = (await request(app).get(`/resources/risks/${namespace}`).expect(200)).body as RisksReport;
      const foreign = full.workloads
        .flatMap((workload) => workload.findings)
        .filter((finding) => finding.sourceNamespace !== namespace && finding.effect === 'audit')
        .map((finding) => finding.sourceName);
      for (const level of ['summary', 'detailed']) {
        const lower = await request(app)
          .get(`/resources/risks/${namespace}?detail_level=${level}`)
          .expect(200);
        const body = lower.body as RisksReport;
        expect(body.workloads.map((workload) => workload.name)).toEqual(
          full.workloads.map((workload) => workload.name),
        );
        for (const name of foreign) expect(lower.text).not.toContain(`"${name}"`);
        for (const finding of body.workloads.flatMap((workload) => workload.findings))
          if (finding.name === 'redacted') expect(finding.ref).toMatch(/^fw-[0-9a-f]{16}$/);
        hidden += foreign.length;
      }
    }
    expect(hidden).toBeGreaterThan(0);
  });

  it('answers bad namespaces with 400, other methods with 405, and without a tracker 404', async () => {
    const { cluster, risks } = await demoWithRisks();
    const app = fixtureControllerApp(cluster, { risks });
    expect((await request(app).get('/resources/risks/Not_A_Namespace').expect(400)).body.error).toMatch(
      /invalid namespace/,
    );
    await request(app).post('/resources/risks/shop').expect(405);
    const posted = await request(app)
      .post('/resources')
      .send({ resource: 'risks', params: { namespace: 'shop' } });
    expect(posted.status).toBe(200);
    await request(fixtureControllerApp(cluster)).get('/resources/risks/shop').expect(404);
  });

  it('POST /api/v1/impact names what a proposed policy would reject and changes nothing', async () => {
    const { cluster, risks, impact } = await demoWithRisks();
    const app = fixtureControllerApp(cluster, { risks, impact });
    const revision = cluster.index.revision;
    const response = await request(app)
      .post('/api/v1/impact')
      .send({ objects: [requireTeamLabel] })
      .expect(200);
    const report = response.body as ImpactReport;
    expect(report.proposed).toEqual([
      expect.objectContaining({
        kind: 'ClusterPolicy',
        name: 'require-team-label',
        replaces: false,
        constraintCount: expect.any(Number),
      }),
    ]);
    expect(report.newlyRejectedCount).toBeGreaterThan(0);
    for (const { workloads } of report.namespaces)
      for (const workload of workloads) {
        expect(workload.kind).toBe('Deployment');
        expect(workload.findings.map((finding) => finding.name)).toContain('require-team-label/team');
      }
    expect(cluster.index.revision).toBe(revision);

    await request(app).post('/api/v1/impact').send({ objects: [] }).expect(400);
    await request(app).post('/api/v1/impact').set('Content-Type', 'text/plain').send('x').expect(415);
    await request(app).get('/api/v1/impact').expect(405);
    // Below `full` the answer would name other namespaces' workloads: refused.
    const summaryApp = fixtureControllerApp(cluster, {
      risks,
      impact,
      configuredDetailLevel: 'summary',
      apiAccess: { levelFor: () => Promise.resolve('summary') },
    });
    const refused = await request(summaryApp)
      .post('/api/v1/impact')
      .send({ objects: [requireTeamLabel] });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatch(/full detail level/);
  });
});

describe('POST /api/v1/impact under the request CPU budget', () => {
  it('gives each request its own budget, as the admission check and MCP check have', async () => {
    const { cluster, risks, impact } = await demoWithRisks();
    const budgets: RequestBudget[] = [];
    const app = fixtureControllerApp(cluster, {
      risks,
      impact: (objects, options) => {
        if (options?.budget) budgets.push(options.budget);
        return impact(objects, options);
      },
    });
    for (let request_ = 0; request_ < 2; request_++) {
      const response = await request(app)
        .post('/api/v1/impact')
        .send({ objects: [requireTeamLabel] });
      expect(response.status).toBe(200);
      expect(response.body.incomplete).toBeUndefined();
    }
    expect(budgets).toHaveLength(2);
    expect(budgets[0]).toBeInstanceOf(RequestBudget);
    expect(budgets[0]?.cpuMilliseconds).toBe(DEFAULT_REQUEST_CPU_BUDGET_MS);
    expect(budgets[0]).not.toBe(budgets[1]);
    // The work was counted against it: the proposals and every slice of workloads are its steps.
    expect(budgets.every((budget) => budget.usedMilliseconds > 0)).toBe(true);
  });
});

describe('workloads at risk in the metrics', () => {
  it('exports a gauge per namespace at risk and severity, agreeing with the risks report', async () => {
    const { cluster, risks } = await demoWithRisks();
    const metrics = createControllerMetrics(cluster.index, () => runtimeStateFor(cluster), {
      processMetrics: false,
      risks: () => risks.countsByNamespace(),
    });
    const text = await metrics.registry.metrics();
    for (const namespace of cluster.index.knownNamespaces()) {
      const rejected = risks.atRiskCount(namespace);
      const line = `forewarn_workloads_at_risk{namespace="${namespace}",severity="Critical"} ${rejected}`;
      if (risks.risksInNamespace(namespace).length > 0) expect(text).toContain(line);
      else expect(text).not.toContain(`namespace="${namespace}"`);
    }
    expect(text).toContain('forewarn_workloads_at_risk{namespace="payments",severity="Critical"} 1');
  });
});
