import { Writable } from 'node:stream';
import { createLogger } from '../../logging/logger';
import type { PolicyReportObject } from './policy-report';
import { PolicyReportPublisher } from './policy-report-publisher';
import { addressKey, addressOf, type StoredPolicyReport } from './policy-report-store';
import { FakeRisks, finding, MemoryStore, workload } from '../../../test/support/policy-report-fakes';

// The publisher of `--policy-reports` against an in-memory store that keeps resourceVersions as the
// API server does (409 on a stale one) and can fail on demand: batched writes, nothing written when
// nothing changed, only its own reports touched, failures logged and retried, the missing CRDs said
// once. The builder's output itself is tested in policy-report.test.ts.

const SETTINGS = { batchWindowMs: 5, initialRetryMs: 10, maxRetryMs: 40, missingCrdRetryMs: 30 };

function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger({ service: 'controller', destination }) };
}

function setUp(store = new MemoryStore(), risks = new FakeRisks()) {
  const { lines, logger } = capturingLogger();
  const publisher = new PolicyReportPublisher(risks, store, logger, SETTINGS);
  return { store, risks, lines, publisher };
}

const until = async (condition: () => boolean, description: string) => {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${description}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

const cleanWorkloads = () => [workload('shop', 'web', [finding('require-team', 'Critical')])];

describe('the policy-report publisher', () => {
  it('writes nothing before the first evaluation, then one report per namespace at risk and the cluster report', async () => {
    const { store, risks, publisher } = setUp();
    risks.isEvaluated = false;
    risks.set('shop', cleanWorkloads());
    risks.set('blog', [workload('blog', 'site', [finding('advise-tier', 'Warning')])]);
    publisher.start();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(store.calls).toEqual([]);
    risks.isEvaluated = true;
    await until(() => store.objects.size === 3, 'three reports');
    await publisher.idle();
    expect(store.namespacedReport('shop')?.summary).toMatchObject({ fail: 1, warn: 0 });
    expect(store.namespacedReport('blog')?.summary).toMatchObject({ fail: 0, warn: 1 });
    expect(store.clusterReport()?.summary).toMatchObject({ fail: 1, warn: 1 });
    expect(publisher.writeCounts()).toEqual(
      expect.arrayContaining([
        { kind: 'PolicyReport', operation: 'create', outcome: 'ok', count: 2 },
        { kind: 'ClusterPolicyReport', operation: 'create', outcome: 'ok', count: 1 },
      ]),
    );
    publisher.stop();
  });

  it('writes nothing when a change leaves the findings as they were, and updates what changed', async () => {
    const { store, risks, publisher } = setUp();
    risks.set('shop', cleanWorkloads());
    publisher.start();
    await until(() => store.objects.size === 2, 'the first reports');
    await publisher.idle();
    const written = store.calls.length;
    risks.set('shop', cleanWorkloads());
    await new Promise((resolve) => setTimeout(resolve, 30));
    await publisher.idle();
    expect(store.calls.length).toBe(written);
    risks.set('shop', [...cleanWorkloads(), workload('shop', 'api', [finding('require-team', 'Critical')])]);
    await until(() => store.namespacedReport('shop')?.summary.fail === 2, 'the updated report');
    await publisher.idle();
    expect(store.calls.slice(written)).toEqual(['update', 'update']);
    publisher.stop();
  });

  it('deletes the report of a namespace fixed, and the cluster report once none is at risk', async () => {
    const { store, risks, publisher } = setUp();
    risks.set('shop', cleanWorkloads());
    publisher.start();
    await until(() => store.objects.size === 2, 'the first reports');
    risks.set('shop', []);
    await until(() => store.objects.size === 0, 'the reports removed');
    publisher.stop();
  });

  it("removes its stale reports found at start, and never touches another's report of the same name", async () => {
    const store = new MemoryStore();
    const stale = store.put({
      apiVersion: 'wgpolicyk8s.io/v1alpha2',
      kind: 'PolicyReport',
      metadata: {
        name: 'forewarn',
        namespace: 'old',
        labels: { 'app.kubernetes.io/managed-by': 'forewarn' },
      },
      results: [],
      summary: { pass: 0, fail: 1, warn: 0, error: 0, skip: 0 },
    });
    const foreign = store.put({
      apiVersion: 'wgpolicyk8s.io/v1alpha2',
      kind: 'PolicyReport',
      metadata: { name: 'forewarn', namespace: 'shop', labels: { owner: 'someone-else' } },
      results: [],
      summary: { pass: 7, fail: 0, warn: 0, error: 0, skip: 0 },
    });
    const { risks, lines, publisher } = setUp(store);
    risks.set('shop', cleanWorkloads());
    publisher.start();
    await until(() => !store.objects.has(addressKey(addressOf(stale.report))), 'the stale report removed');
    await until(() => store.clusterReport() !== undefined, 'the cluster report');
    await publisher.idle();
    expect(store.namespacedReport('shop')).toEqual(foreign.report);
    risks.set('shop', [...cleanWorkloads(), workload('shop', 'api', [finding('x', 'Warning')])]);
    await new Promise((resolve) => setTimeout(resolve, 30));
    await publisher.idle();
    expect(store.namespacedReport('shop')).toEqual(foreign.report);
    const said = lines.filter((line) => String(line.msg).includes('is not Forewarn'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ level: 'warn', namespace: 'shop' });
    publisher.stop();
  });

  it('says once that the CRDs are missing, looks again, and writes once they are installed', async () => {
    const store = new MemoryStore();
    store.crdInstalled = false;
    const { risks, lines, publisher } = setUp(store);
    risks.set('shop', cleanWorkloads());
    publisher.start();
    await until(() => store.calls.filter((call) => call === 'list').length >= 3, 'three looks');
    const missing = lines.filter((line) => String(line.msg).includes('CRDs'));
    expect(missing).toHaveLength(1);
    expect(missing[0]).toMatchObject({ level: 'warn' });
    store.crdInstalled = true;
    await until(() => store.objects.size === 2, 'the reports once the CRDs are there');
    expect(lines.some((line) => line.level === 'info' && String(line.msg).includes('installed now'))).toBe(
      true,
    );
    publisher.stop();
  });

  it('logs a failed write with what to do and retries it with backoff, never throwing', async () => {
    const store = new MemoryStore();
    store.failing.set('create', { status: 500, times: 2 });
    const { risks, lines, publisher } = setUp(store);
    risks.set('shop', cleanWorkloads());
    publisher.start();
    await until(() => store.objects.size === 2, 'the reports after the failures');
    const failures = lines.filter((line) => String(line.msg).includes('could not be written'));
    expect(failures).toHaveLength(2);
    expect(failures[0]).toMatchObject({ level: 'warn', status: 500, namespace: 'shop' });
    expect(typeof failures[0]?.remedy).toBe('string');
    // Backoff: the second failure waits twice as long as the first.
    expect(failures.map((line) => line.retryInMs)).toEqual([10, 20]);
    expect(publisher.writeCounts()).toContainEqual({
      kind: 'PolicyReport',
      operation: 'create',
      outcome: 'failed',
      count: 2,
    });
    publisher.stop();
  });

  it('stops a batch at a refusal of its rights and names the RBAC to grant', async () => {
    const store = new MemoryStore();
    store.failing.set('create', { status: 403, times: 1 });
    const { risks, lines, publisher } = setUp(store);
    risks.set('shop', cleanWorkloads());
    risks.set('blog', [workload('blog', 'site', [finding('x', 'Warning')])]);
    publisher.start();
    await until(() => store.objects.size === 3, 'every report after the refusal');
    const refusals = lines.filter((line) => line.status === 403);
    expect(refusals).toHaveLength(1);
    expect(String(refusals[0]?.remedy)).toMatch(/policyreports/);
    // One refused create, then the batch stopped: no second create in the same moment.
    expect(store.calls.slice(0, 3)).toEqual(['list', 'create', 'create']);
    publisher.stop();
  });

  it('re-reads a report changed by someone else (409) and keeps their labels in the update', async () => {
    const { store, risks, publisher } = setUp();
    risks.set('shop', cleanWorkloads());
    publisher.start();
    await until(() => store.objects.size === 2, 'the first reports');
    await publisher.idle();
    const current = store.namespacedReport('shop') as PolicyReportObject;
    store.put({
      ...current,
      metadata: { ...current.metadata, labels: { ...current.metadata.labels, audited: 'yes' } },
    });
    risks.set('shop', [...cleanWorkloads(), workload('shop', 'api', [finding('y', 'Warning')])]);
    await until(() => store.namespacedReport('shop')?.summary.warn === 1, 'the update after the conflict');
    expect(store.namespacedReport('shop')?.metadata.labels).toEqual({
      'app.kubernetes.io/managed-by': 'forewarn',
      audited: 'yes',
    });
    publisher.stop();
  });

  it("takes another replica's report of the same findings as it is: its timestamps, no write", async () => {
    const other = new MemoryStore();
    const first = setUp(other);
    first.risks.set('shop', cleanWorkloads());
    first.publisher.start();
    await until(() => other.namespacedReport('shop') !== undefined, "the other replica's report");
    first.publisher.stop();
    const written = other.objects.get('PolicyReport/shop/forewarn') as StoredPolicyReport;
    // This replica lists before the other's report exists, then meets it on create (409).
    const store = new MemoryStore();
    store.afterList = () => store.objects.set('PolicyReport/shop/forewarn', structuredClone(written));
    const risks = new FakeRisks();
    const later = new PolicyReportPublisher(
      risks,
      store,
      capturingLogger().logger,
      SETTINGS,
      () => new Date(Date.now() + 3_600_000),
    );
    risks.set('shop', cleanWorkloads());
    later.start();
    await until(() => store.clusterReport() !== undefined, 'the cluster report');
    await later.idle();
    expect(store.objects.get('PolicyReport/shop/forewarn')).toEqual(written);
    expect(store.calls.filter((call) => call === 'update')).toEqual([]);
    later.stop();
  });

  it('makes way for requests while it rebuilds many reports that need no write', async () => {
    const { store, risks, publisher } = setUp();
    const namespaces = Array.from({ length: 20 }, (_, position) => `team-${position}`);
    for (const namespace of namespaces)
      risks.set(namespace, [workload(namespace, 'web', [finding('require-team', 'Critical')])]);
    publisher.start();
    await until(() => store.objects.size === 21, 'the first reports');
    await publisher.idle();
    // Turns of the event loop (what a request needs to be answered), counted while the batch runs.
    let turns = 0;
    let counting = true;
    const count = () => {
      turns++;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    // Each rebuild now takes 1 ms; the same findings again: 20 ms of work with no write to wait for.
    const view = risks.namespaceView.bind(risks);
    const turnOfEachRebuild: number[] = [];
    risks.namespaceView = (namespace: string) => {
      turnOfEachRebuild.push(turns);
      const end = performance.now() + 1;
      while (performance.now() < end);
      return view(namespace);
    };
    for (const namespace of namespaces) risks.set(namespace, risks.byNamespace.get(namespace) ?? []);
    await publisher.idle();
    counting = false;
    expect(turnOfEachRebuild).toHaveLength(20);
    // Slices of about 2 ms: the loop turned between them, not once for the whole batch.
    expect(Math.max(...turnOfEachRebuild) - Math.min(...turnOfEachRebuild)).toBeGreaterThanOrEqual(5);
    expect(store.calls.filter((call) => call !== 'list' && call !== 'create')).toEqual([]);
    publisher.stop();
  });
});
