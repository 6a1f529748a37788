import type { DetailLevel } from '../../model/api';
import type { KubernetesObject } from '../../model/kubernetes';
import { indexObjects } from '../../../test/support/controller-fixtures';
import { ownerLabelKyvernoPolicy, requiredLabelPolicy } from '../../../test/support/required-label-policy';
import { policyReportSource } from '../policy-report-wiring';
import {
  buildClusterPolicyReport,
  buildNamespacePolicyReport,
  DEFAULT_POLICY_REPORT_LIMITS,
  firstSeenOf,
  OMITTED_RESULTS_ANNOTATION,
  policyAndRuleOf,
  sameReportContent,
  type PolicyReportObject,
} from './policy-report';
import { RiskTracker } from './risk-tracker';

// The pure core of `--policy-reports` (issue 35): the risks view of a namespace, rendered at the
// controller's level for any reader of that namespace, becomes its PolicyReport; the counts by
// namespace become the ClusterPolicyReport. Built from a real index and tracker, so the findings are
// the engines' own.

const NOW = new Date('2026-11-27T22:00:00.000Z');
const LATER = new Date('2026-11-27T23:00:00.000Z');

function deployment(namespace: string, name: string, labels: Record<string, string> = {}): KubernetesObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels, uid: `uid-${name}` },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
      },
    },
  };
}

/** A namespaced Kyverno policy of `shop` itself: its name is the namespace's own, shown at every level. */
const SHOP_OWNER_POLICY = ownerLabelKyvernoPolicy('shop');

/** An audit-only ClusterPolicy prints nothing to the caller: its name is hidden below `full`. */
const CLUSTER_AUDIT_POLICY: KubernetesObject = {
  apiVersion: 'kyverno.io/v1',
  kind: 'ClusterPolicy',
  metadata: { name: 'platform-tier-audit' },
  spec: {
    validationFailureAction: 'Audit',
    rules: [
      {
        name: 'tier',
        match: { any: [{ resources: { kinds: ['Deployment'], namespaces: ['blog'] } }] },
        validate: { message: 'a tier label is expected', pattern: { metadata: { labels: { tier: '?*' } } } },
      },
    ],
  },
};

async function risksOf(objects: KubernetesObject[]) {
  const { index, ingestor } = indexObjects([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'blog' } },
  ]);
  const tracker = new RiskTracker(index, { debounceMs: 0, sliceBudgetMs: 5, maxWorkloadsPerSlice: 64 });
  ingestor.onChange((object, removed) => tracker.observe(object, removed));
  for (const object of objects) ingestor.upsert(object);
  tracker.start();
  await tracker.idle();
  return tracker;
}

const CLUSTER = [
  // Cluster-scoped: another namespace's business, redacted below `full`.
  ...requiredLabelPolicy({ name: 'require-team', label: 'team', actions: ['Deny'] }),
  SHOP_OWNER_POLICY,
  deployment('shop', 'web'),
  deployment('shop', 'api', { team: 'a' }),
  deployment('shop', 'fine', { team: 'a', owner: 'b' }),
  deployment('blog', 'site'),
];

async function reportAt(level: DetailLevel, objects = CLUSTER, namespace = 'shop') {
  const tracker = await risksOf(objects);
  const view = policyReportSource(tracker, level).namespaceView(namespace);
  return { tracker, report: buildNamespacePolicyReport(view, { now: NOW }) };
}

describe('the PolicyReport of a namespace', () => {
  it('has one result per finding: fail for what would be rejected, warn for what is only audited', async () => {
    const { report } = await reportAt('full');
    expect(report?.apiVersion).toBe('wgpolicyk8s.io/v1alpha2');
    expect(report?.kind).toBe('PolicyReport');
    expect(report?.metadata).toEqual({
      name: 'forewarn',
      namespace: 'shop',
      labels: { 'app.kubernetes.io/managed-by': 'forewarn' },
      annotations: { 'forewarn.io/detail-level': 'full' },
    });
    const lines = report?.results.map((result) => [
      result.resources[0]?.name,
      result.policy,
      result.rule,
      result.result,
      result.severity,
    ]);
    expect(lines).toEqual([
      ['web', 'require-team', 'require-team', 'fail', 'critical'],
      ['api', 'owner-label', 'owner', 'warn', 'medium'],
      ['web', 'owner-label', 'owner', 'warn', 'medium'],
    ]);
    expect(report?.summary).toEqual({ pass: 0, fail: 1, warn: 2, error: 0, skip: 0 });
    const [rejected] = report?.results ?? [];
    expect(rejected?.source).toBe('forewarn');
    expect(rejected?.scored).toBe(true);
    expect(rejected?.timestamp).toEqual({ seconds: NOW.getTime() / 1000, nanos: 0 });
    expect(rejected?.resources).toEqual([
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'shop', uid: 'uid-web' },
    ]);
    expect(rejected?.category).toBe('ValidatingAdmissionPolicyBinding');
    expect(rejected?.message).toContain('set a team label');
    expect(rejected?.properties).toMatchObject({ outcome: 'rejected', detailLevel: 'full' });
    expect(rejected?.properties.fix).toMatch(/require-team/);
  });

  it('at summary names no policy the API would hide: its opaque reference stands for it', async () => {
    const objects = [...CLUSTER, CLUSTER_AUDIT_POLICY];
    const { report } = await reportAt('summary', objects, 'blog');
    expect(JSON.stringify(report)).not.toContain('platform-tier-audit');
    const audited = report?.results.find((result) => result.result === 'warn');
    expect(audited?.policy).toMatch(/^fw-[0-9a-f]{16}$/);
    expect(audited?.rule).toBeUndefined();
    expect(audited?.properties.ref).toBe(audited?.policy);
    expect(audited?.properties.detailLevel).toBe('summary');
    expect(report?.metadata.annotations?.['forewarn.io/detail-level']).toBe('summary');
    // A policy that names itself in the API server's denial is named as the risks resource names it
    // (model/name-visibility.ts, rule 3); at full the audit policy is named too.
    expect(report?.results.find((result) => result.result === 'fail')?.policy).toBe('require-team');
    const full = await reportAt('full', objects, 'blog');
    expect(full.report?.results.map((result) => result.policy)).toContain('platform-tier-audit');
  });

  it("names the namespace's own policies at every level", async () => {
    const { report } = await reportAt('summary');
    expect(report?.results.filter((result) => result.policy === 'owner-label')).toHaveLength(2);
  });

  it('is absent for a namespace without findings, so its report is removed', async () => {
    const { report } = await reportAt('full', CLUSTER, 'quiet');
    expect(report).toBeUndefined();
    const fixed = await reportAt('full', [
      ...requiredLabelPolicy({ name: 'require-team', label: 'team', actions: ['Deny'] }),
      deployment('shop', 'fine', { team: 'a' }),
    ]);
    expect(fixed.report).toBeUndefined();
  });

  it('keeps the first timestamp of a finding that lasts and stamps a new one now', async () => {
    const tracker = await risksOf(CLUSTER);
    const view = policyReportSource(tracker, 'full').namespaceView('shop');
    const first = buildNamespacePolicyReport(view, { now: NOW });
    const withoutApi = { ...view, workloads: view.workloads.filter((workload) => workload.name !== 'api') };
    const previous = buildNamespacePolicyReport(withoutApi, { now: NOW });
    const next = buildNamespacePolicyReport(view, {
      now: LATER,
      ...(previous ? { firstSeen: firstSeenOf(previous) } : {}),
    });
    const stamps = next?.results.map((result) => [result.resources[0]?.name, result.timestamp.seconds]);
    expect(stamps).toEqual([
      ['web', NOW.getTime() / 1000],
      ['api', LATER.getTime() / 1000],
      ['web', NOW.getTime() / 1000],
    ]);
    // The same findings rebuilt later say the same: nothing to write.
    const again = buildNamespacePolicyReport(view, {
      now: LATER,
      ...(first ? { firstSeen: firstSeenOf(first) } : {}),
    });
    expect(first && again && sameReportContent(first, again)).toBe(true);
  });
});

describe('size limits', () => {
  const many = () => [
    ...requiredLabelPolicy({ name: 'require-team', label: 'team', actions: ['Deny'] }),
    ...requiredLabelPolicy({ name: 'advise-tier', label: 'tier', actions: ['Warn'] }),
    ...Array.from({ length: 30 }, (_, position) =>
      deployment('shop', `app-${String(position).padStart(2, '0')}`),
    ),
  ];

  it('caps the results, worst first, counts every finding in the summary and says how many are left out', async () => {
    const tracker = await risksOf(many());
    const view = policyReportSource(tracker, 'full').namespaceView('shop');
    const limits = { ...DEFAULT_POLICY_REPORT_LIMITS, maxResults: 40 };
    const report = buildNamespacePolicyReport(view, { now: NOW, limits });
    expect(report?.results).toHaveLength(40);
    expect(report?.results.slice(0, 30).every((result) => result.result === 'fail')).toBe(true);
    expect(report?.summary).toMatchObject({ fail: 30, warn: 30 });
    expect(report?.metadata.annotations?.[OMITTED_RESULTS_ANNOTATION]).toBe('20');
  });

  it('keeps the results under the byte budget and shortens long texts', async () => {
    const tracker = await risksOf(many());
    const view = policyReportSource(tracker, 'full').namespaceView('shop');
    const limits = { maxResults: 1000, maxResultBytes: 8 * 1024, maxTextLength: 40 };
    const report = buildNamespacePolicyReport(view, { now: NOW, limits });
    const bytes = Buffer.byteLength(JSON.stringify(report?.results));
    expect(bytes).toBeLessThanOrEqual(8 * 1024);
    expect(report?.results.length).toBeGreaterThan(0);
    expect(report?.results.length).toBeLessThan(60);
    expect(Number(report?.metadata.annotations?.[OMITTED_RESULTS_ANNOTATION])).toBe(
      60 - (report?.results.length ?? 0),
    );
    for (const result of report?.results ?? []) {
      expect(result.message.length).toBeLessThanOrEqual(40);
      for (const value of Object.values(result.properties)) expect(value.length).toBeLessThanOrEqual(40);
    }
  });

  it('keeps a report of the default limits under etcd 1.5 MiB whatever the number of findings', async () => {
    const tracker = await risksOf([
      ...requiredLabelPolicy({ name: 'require-team', label: 'team', actions: ['Deny'] }),
      ...Array.from({ length: 1100 }, (_, position) => deployment('shop', `w-${position}`)),
    ]);
    const report = buildNamespacePolicyReport(policyReportSource(tracker, 'full').namespaceView('shop'), {
      now: NOW,
    });
    const atRisk = tracker.atRiskCount('shop');
    expect(atRisk).toBeGreaterThan(DEFAULT_POLICY_REPORT_LIMITS.maxResults);
    expect(report?.results).toHaveLength(DEFAULT_POLICY_REPORT_LIMITS.maxResults);
    expect(report?.summary.fail).toBe(atRisk);
    expect(Buffer.byteLength(JSON.stringify(report))).toBeLessThan(1.5 * 1024 * 1024);
  });
});

describe('the ClusterPolicyReport', () => {
  it('has one result per namespace at risk, about the Namespace, with counts and no policy name', async () => {
    const tracker = await risksOf(CLUSTER);
    const report = buildClusterPolicyReport(tracker.countsByNamespace(), { now: NOW });
    expect(report?.kind).toBe('ClusterPolicyReport');
    expect(report?.metadata.namespace).toBeUndefined();
    const lines = report?.results.map((result) => [result.resources[0], result.result, result.properties]);
    expect(lines).toEqual([
      [{ apiVersion: 'v1', kind: 'Namespace', name: 'blog' }, 'fail', { rejected: '1', warned: '0' }],
      [{ apiVersion: 'v1', kind: 'Namespace', name: 'shop' }, 'fail', { rejected: '1', warned: '1' }],
    ]);
    expect(report?.summary).toMatchObject({ fail: 2, warn: 0 });
    const text = JSON.stringify(report);
    expect(text).not.toContain('require-team');
    expect(text).not.toContain('owner-label');
  });

  it('is absent when no namespace has a workload at risk', () => {
    expect(buildClusterPolicyReport([], { now: NOW })).toBeUndefined();
    expect(
      buildClusterPolicyReport([{ namespace: 'shop', rejected: 0, warned: 0 }], { now: NOW }),
    ).toBeUndefined();
  });
});

describe('policy and rule names', () => {
  it("prefixes another namespace's policy with its namespace (only visible at full)", () => {
    const finding = { name: 'limits/cpu', sourceName: 'limits', sourceNamespace: 'platform' };
    expect(policyAndRuleOf(finding, 'shop')).toEqual({ policy: 'platform/limits', rule: 'cpu' });
    expect(policyAndRuleOf(finding, 'platform')).toEqual({ policy: 'limits', rule: 'cpu' });
    expect(policyAndRuleOf({ ...finding, name: 'redacted', ref: 'fw-0123456789abcdef' }, 'shop')).toEqual({
      policy: 'fw-0123456789abcdef',
    });
  });
});

describe('comparing what the server holds with what is wanted', () => {
  it('ignores key order and the labels others add, not a changed result', async () => {
    const { report } = await reportAt('full');
    const desired = report as PolicyReportObject;
    const reordered = JSON.parse(
      JSON.stringify({ summary: desired.summary, results: desired.results, metadata: desired.metadata }),
    ) as PolicyReportObject;
    const stored: PolicyReportObject = {
      ...desired,
      ...reordered,
      metadata: { ...desired.metadata, labels: { ...desired.metadata.labels, team: 'x' } },
    };
    expect(sameReportContent(stored, desired)).toBe(true);
    const changed = { ...stored, results: stored.results.slice(1) };
    expect(sameReportContent(changed, desired)).toBe(false);
  });
});
