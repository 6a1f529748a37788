import type { KubernetesObject } from '../../model/kubernetes';
import { indexObjects } from '../../../test/support/controller-fixtures';
import { requiredLabelPolicy } from '../../../test/support/required-label-policy';
import { RiskTracker } from './risk-tracker';
import { buildRisksReport } from './risk-view';
import { evaluateWorkload, isEvaluatedWorkload, keepWorkload } from './workload-risk';

// Workloads at risk (issue 35): each running workload evaluated as a re-apply with the admission
// check's engines, kept current as policies and workloads change.

function requireTeamLabel(name: string, actions: string[], namespaces?: string[]): KubernetesObject[] {
  return requiredLabelPolicy({
    name,
    label: 'team',
    actions,
    ...(namespaces
      ? {
          matchResources: {
            namespaceSelector: {
              matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: namespaces }],
            },
          },
        }
      : {}),
  });
}

function deployment(namespace: string, name: string, labels: Record<string, string> = {}): KubernetesObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels, uid: `uid-${namespace}-${name}`, resourceVersion: '7' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
      },
    },
    status: { readyReplicas: 1 },
  };
}

const namespaceObject = (name: string): KubernetesObject => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, labels: {} },
});

const settings = { debounceMs: 0, sliceBudgetMs: 1, maxWorkloadsPerSlice: 2 };

describe('workloads at risk: the core', () => {
  it('evaluates a kept workload as a re-apply and keeps only violations, rejected or warned', () => {
    const { index } = indexObjects([
      namespaceObject('shop'),
      ...requireTeamLabel('team-required', ['Deny']),
      ...requireTeamLabel('team-advised', ['Warn']),
    ]);
    const risk = evaluateWorkload(index, keepWorkload(deployment('shop', 'web')));
    expect(risk.workload).toEqual({ group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'web' });
    expect(risk.findings.map((finding) => [finding.constraint.source.name, finding.outcome]).sort()).toEqual([
      ['team-advised', 'warned'],
      ['team-required', 'rejected'],
    ]);
    expect(evaluateWorkload(index, keepWorkload(deployment('shop', 'ok', { team: 'a' }))).findings).toEqual(
      [],
    );
  });

  it('keeps what a re-apply sends, not what the cluster writes, and names the owner', () => {
    const object = {
      ...deployment('shop', 'web'),
      metadata: {
        ...deployment('shop', 'web').metadata,
        managedFields: [{ manager: 'kubectl' }],
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}', note: 'kept' },
        ownerReferences: [{ kind: 'Rollout', name: 'web', controller: true }],
      },
    };
    const kept = keepWorkload(object);
    const parsed = JSON.parse(kept.json) as KubernetesObject;
    expect(parsed.status).toBeUndefined();
    expect(parsed.metadata).not.toHaveProperty('managedFields');
    expect(parsed.metadata).not.toHaveProperty('resourceVersion');
    expect(parsed.metadata?.annotations).toEqual({ note: 'kept' });
    expect(kept.identity.owner).toEqual({ kind: 'Rollout', name: 'web' });
  });

  it('evaluates pod controllers, bare Pods and Services, not what an owner represents', () => {
    const pod = (owners?: unknown[]): KubernetesObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'shop', ...(owners ? { ownerReferences: owners } : {}) },
    });
    expect(isEvaluatedWorkload(pod())).toBe(true);
    expect(isEvaluatedWorkload(pod([{ kind: 'ReplicaSet', name: 'r' }]))).toBe(false);
    expect(isEvaluatedWorkload({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' } })).toBe(true);
    expect(isEvaluatedWorkload({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } })).toBe(false);
    expect(isEvaluatedWorkload(deployment('shop', 'web'))).toBe(true);
  });
});

describe('workloads at risk: kept current in the background', () => {
  function cluster() {
    const indexed = indexObjects([namespaceObject('shop'), namespaceObject('blog')]);
    const tracker = new RiskTracker(indexed.index, settings);
    indexed.ingestor.onChange((object, removed) => tracker.observe(object, removed));
    return { ...indexed, tracker };
  }

  it('evaluates every workload after the first sync, in slices, then follows policy and workload changes', async () => {
    const { ingestor, tracker } = cluster();
    for (let item = 0; item < 5; item++) ingestor.upsert(deployment('shop', `app-${item}`));
    ingestor.upsert(deployment('blog', 'site', { team: 'blog' }));
    expect(tracker.status()).toMatchObject({ workloads: 6, evaluations: 0, evaluated: false });
    tracker.start();
    await tracker.idle();
    expect(tracker.status()).toMatchObject({ workloads: 6, evaluations: 6, evaluated: true, pending: 0 });
    expect(tracker.atRiskCount('shop')).toBe(0);

    // A policy tightened: the workloads it applies to appear at risk.
    for (const object of requireTeamLabel('team-required', ['Deny'])) ingestor.upsert(object);
    await tracker.idle();
    expect(tracker.atRiskCount('shop')).toBe(5);
    expect(tracker.atRiskCount('blog')).toBe(0);
    expect(tracker.countsByNamespace()).toEqual([{ namespace: 'shop', rejected: 5, warned: 0 }]);

    // A workload fixed: it alone is evaluated again and disappears.
    const before = tracker.status().evaluations;
    ingestor.upsert(deployment('shop', 'app-0', { team: 'shop' }));
    await tracker.idle();
    expect(tracker.status().evaluations).toBe(before + 1);
    expect(tracker.risksInNamespace('shop').map((risk) => risk.workload.name)).toEqual([
      'app-1',
      'app-2',
      'app-3',
      'app-4',
    ]);

    // A status-only update changes nothing a rule reads: not evaluated again.
    ingestor.upsert({ ...deployment('shop', 'app-1'), status: { readyReplicas: 3 } });
    await tracker.idle();
    expect(tracker.status().evaluations).toBe(before + 1);

    // The policy removed: the workloads it failed are evaluated again and are no longer at risk.
    for (const object of requireTeamLabel('team-required', ['Deny'])) ingestor.delete(object);
    await tracker.idle();
    expect(tracker.atRiskCount('shop')).toBe(0);
    expect(tracker.countsByNamespace()).toEqual([]);
  });

  it('while the API serves, slices are spaced by the pause the loop allows, given each slice’s length', async () => {
    const indexed = indexObjects([namespaceObject('shop')]);
    const slices: number[] = [];
    const tracker = new RiskTracker(indexed.index, {
      ...settings,
      maxWorkloadsPerSlice: 1,
      serving: () => true,
      pauseWhileServingMs: 60_000,
      pauseWhileServing: (sliceMs) => {
        slices.push(sliceMs);
        return 0;
      },
    });
    indexed.ingestor.onChange((object, removed) => tracker.observe(object, removed));
    for (let item = 0; item < 4; item++) indexed.ingestor.upsert(deployment('shop', `app-${item}`));
    tracker.start();
    // The fixed pause (a minute) is not used: the injected one (none) is, after each slice but the last.
    await tracker.idle();
    expect(tracker.status()).toMatchObject({ evaluations: 4, pending: 0 });
    expect(slices).toHaveLength(3);
    for (const sliceMs of slices) expect(sliceMs).toBeGreaterThanOrEqual(0);
  });

  it('a namespace-scoped policy change re-evaluates only that namespace, a deleted workload is forgotten', async () => {
    const { ingestor, tracker, index } = cluster();
    ingestor.upsert(deployment('shop', 'web'));
    ingestor.upsert(deployment('blog', 'site'));
    tracker.start();
    await tracker.idle();
    const quota: KubernetesObject = {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'limits', namespace: 'blog' },
      spec: { limits: [{ type: 'Container', max: { memory: '1Gi' } }] },
    };
    const before = tracker.status().evaluations;
    ingestor.upsert(quota);
    await tracker.idle();
    expect(tracker.status().evaluations).toBe(before + 1);
    expect(index.constraintsForNamespace('blog').length).toBeGreaterThan(0);
    ingestor.delete(deployment('blog', 'site'));
    expect(tracker.status().workloads).toBe(1);
  });

  it('renders a namespace report like check, redacting what the level hides', async () => {
    const { ingestor, tracker } = cluster();
    ingestor.upsert(deployment('shop', 'web'));
    for (const object of requireTeamLabel('team-required', ['Deny'])) ingestor.upsert(object);
    tracker.start();
    await tracker.idle();
    const full = buildRisksReport(tracker, 'shop', 'full', new Date(0));
    expect(full).toMatchObject({ namespace: 'shop', atRiskCount: 1, warnedCount: 0, evaluated: true });
    const [entry] = full.workloads;
    expect(entry).toMatchObject({
      kind: 'Deployment',
      name: 'web',
      apiVersion: 'apps/v1',
      outcome: 'rejected',
    });
    expect(entry?.findings[0]).toMatchObject({
      verdict: 'violates',
      severity: 'Critical',
      name: 'team-required',
    });
    expect(entry?.findings[0]?.summary).toMatch(/^will be rejected: set a team label/);
    const summary = buildRisksReport(tracker, 'shop', 'summary', new Date(0));
    // Below `full` what the policy requires (its CEL message) is hidden; the namespace's own workload is
    // named, and so is the rejecting policy, as the API server names it to the caller it rejects.
    expect(summary.workloads[0]?.name).toBe('web');
    expect(JSON.stringify(full)).toContain('set a team label');
    expect(JSON.stringify(summary)).not.toContain('set a team label');
  });
});
