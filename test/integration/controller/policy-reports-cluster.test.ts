import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { parseControllerConfig } from '../../../services/controller/config';
import { startController, type RunningController } from '../../../services/controller/runtime';
import type { PolicyReportObject } from '../../../services/controller/risks/policy-report';
import { createLogger } from '../../../services/logging/logger';
import { KubernetesApiTestServer } from '../../support/kubernetes-api-server';
import { POLICY_REPORT_CRDS } from '../../support/policy-report-crds';
import { labelledDeployment as deployment, requiredLabelPolicy } from '../../support/required-label-policy';
import { waitUntil } from '../../support/kubernetes-api/wait-until';

// `--policy-reports` through the whole controller against the protocol-faithful Kubernetes API test
// server, written by the real store (plain requests with resourceVersions): without the CRDs the
// controller says so once and goes on; once they are installed the reports appear, follow a fix,
// survive a failed write, and leave what is not Forewarn's alone.

const REPORTS = 'wgpolicyk8s.io/v1alpha2';

describe('--policy-reports against the Kubernetes API test server', () => {
  const server = new KubernetesApiTestServer();
  const lines: Array<Record<string, unknown>> = [];
  let controller: RunningController;
  let directory: string;

  const report = (namespace: string) =>
    server.get(REPORTS, 'PolicyReport', namespace, 'forewarn') as unknown as PolicyReportObject | undefined;
  const clusterReport = () =>
    server.get(REPORTS, 'ClusterPolicyReport', undefined, 'forewarn') as unknown as
      PolicyReportObject | undefined;

  beforeAll(async () => {
    await server.start();
    for (const name of ['shop', 'blog', 'quiet'])
      server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    server.create(deployment('shop', 'web'));
    server.create(deployment('shop', 'api', { team: 'shop' }));
    server.create(deployment('blog', 'site'));
    server.create(deployment('quiet', 'fine', { team: 'quiet' }));
    for (const object of requiredLabelPolicy({ name: 'require-team', label: 'team', actions: ['Deny'] }))
      server.create(object);
    directory = mkdtempSync(path.join(os.tmpdir(), 'forewarn-policy-reports-'));
    const kubeconfig = path.join(directory, 'kubeconfig');
    writeFileSync(kubeconfig, server.kubeConfigYaml());
    const config = parseControllerConfig(
      ['--kubeconfig', kubeconfig, '--port', '0', '--address', '127.0.0.1', '--mcp=false'],
      { FOREWARN_API_AUTH: 'none', FOREWARN_POLICY_REPORTS: 'true' },
    );
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
          lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    controller = await startController(config, createLogger({ service: 'controller', destination }), {
      policyReportSettings: {
        batchWindowMs: 50,
        initialRetryMs: 50,
        maxRetryMs: 200,
        missingCrdRetryMs: 200,
      },
    });
  });

  afterAll(async () => {
    await controller?.close();
    await server.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  it('without the CRDs says so once, keeps looking, and serves the risks as before', async () => {
    await controller.risks.idle();
    await waitUntil(
      () => server.requests.filter((request) => request.path.endsWith('/policyreports')).length >= 3,
      'three looks for the PolicyReport CRD',
      10_000,
      20,
    );
    const said = lines.filter((line) => String(line.msg).includes('CRDs') && line.level === 'warn');
    expect(said).toHaveLength(1);
    const risks = await fetch(`http://127.0.0.1:${controller.port}/resources/risks/shop`);
    expect(risks.status).toBe(200);
  });

  it('once the CRDs are installed, writes a report per namespace at risk and the cluster report', async () => {
    // Someone else's report of the same name: never touched.
    for (const crd of POLICY_REPORT_CRDS) server.create(crd);
    server.create({
      apiVersion: REPORTS,
      kind: 'PolicyReport',
      metadata: { name: 'forewarn', namespace: 'blog', labels: { team: 'blog' } },
      summary: { pass: 3 },
    });
    await waitUntil(
      () => report('shop') !== undefined && clusterReport() !== undefined,
      'the reports',
      10_000,
      20,
    );
    const shop = report('shop');
    expect(shop?.metadata.labels).toEqual({ 'app.kubernetes.io/managed-by': 'forewarn' });
    expect(shop?.results.map((result) => [result.resources[0]?.name, result.policy, result.result])).toEqual([
      ['web', 'require-team', 'fail'],
    ]);
    expect(shop?.results[0]?.resources[0]?.uid).toEqual(expect.any(String));
    expect(shop?.summary).toMatchObject({ fail: 1, warn: 0 });
    expect(report('quiet')).toBeUndefined();
    expect(report('blog')?.summary).toEqual({ pass: 3 });
    expect(clusterReport()?.results.map((result) => result.resources[0]?.name)).toEqual(['blog', 'shop']);
  });

  it('follows a fix: the fixed namespace loses its report, the cluster report its line', async () => {
    server.update(deployment('shop', 'web', { team: 'shop' }));
    await waitUntil(() => report('shop') === undefined, 'the fixed namespace report removed', 10_000, 20);
    await waitUntil(
      () => clusterReport()?.results.length === 1,
      'the cluster report without the fixed namespace',
      10_000,
      20,
    );
    expect(clusterReport()?.results[0]?.resources[0]?.name).toBe('blog');
  });

  it('logs a failed write, retries it, and counts both in the metrics', async () => {
    server.failNext({ method: 'POST', pathIncludes: '/namespaces/shop/policyreports', status: 500 });
    server.update(deployment('shop', 'web'));
    await waitUntil(() => report('shop') !== undefined, 'the report after the failed write', 10_000, 20);
    const failure = lines.find((line) => String(line.msg).includes('could not be written'));
    expect(failure).toMatchObject({ level: 'warn', status: 500, namespace: 'shop' });
    const metrics = await (await fetch(`http://127.0.0.1:${controller.port}/metrics`)).text();
    expect(metrics).toMatch(
      /forewarn_policy_report_writes_total\{kind="PolicyReport",operation="create",outcome="failed"\} 1/,
    );
    expect(metrics).toMatch(
      /forewarn_policy_report_writes_total\{kind="PolicyReport",operation="delete",outcome="ok"\} 1/,
    );
  });

  it('writes nothing while nothing changes', async () => {
    // Writes that went through; someone else's report in blog is only looked at again (a refused create).
    const writes = () =>
      server.requests.filter(
        (request) => request.method !== 'GET' && request.status !== undefined && request.status < 300,
      ).length;
    await controller.policyReports?.idle();
    const before = writes();
    controller.risks.reevaluateAll();
    await controller.risks.idle();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await controller.policyReports?.idle();
    expect(writes()).toBe(before);
    expect(report('blog')?.summary).toEqual({ pass: 3 });
  });
});
