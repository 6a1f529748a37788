import type { KubernetesObject } from '../../model/kubernetes';
import { indexObjects } from '../../../test/support/controller-fixtures';
import { RiskTracker } from './risk-tracker';
import { evaluateWorkload, keepWorkload } from './workload-risk';

// A cluster-wide policy change is worked out in slices (issue 35): observing it reads no namespace,
// the index answers with the new version at once, and a delete or a second update of the same policy
// arriving between two slices wins, never lost: once idle, the tracker says what a fresh evaluation
// of every workload against the final index says.

const NAMESPACES = 120;
const GOLD = { tier: 'gold' };

function namespaceObject(position: number): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: `ns-${position}`, labels: position % 3 === 0 ? GOLD : {} },
  };
}

function deployment(namespace: string): KubernetesObject {
  const labels = { app: 'web' };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace, labels, uid: `uid-${namespace}` },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } },
    },
  };
}

/** The benchmark's policy: Deployments of the selected namespaces need an `owner` label. */
function requireOwner(
  action: 'Enforce' | 'Audit',
  namespaceLabels: Record<string, string>,
): KubernetesObject {
  return {
    apiVersion: 'kyverno.io/v1',
    kind: 'ClusterPolicy',
    metadata: { name: 'require-owner', uid: 'uid-require-owner' },
    spec: {
      validationFailureAction: action,
      rules: [
        {
          name: 'require-owner',
          match: {
            any: [
              { resources: { kinds: ['Deployment'], namespaceSelector: { matchLabels: namespaceLabels } } },
            ],
          },
          validate: {
            message: 'an owner label is required',
            pattern: { metadata: { labels: { owner: '?*' } } },
          },
        },
      ],
    },
  };
}

/**
 * A tracker over NAMESPACES namespaces with a Deployment each, whose clock moves 0.25 ms per look
 * (a slice of 1 ms walks a few namespaces), running `betweenSlices` after the given slices.
 */
async function slicedCluster(betweenSlices: Record<number, () => void> = {}) {
  const deployments = Array.from({ length: NAMESPACES }, (_, position) => deployment(`ns-${position}`));
  const indexed = indexObjects([
    ...Array.from({ length: NAMESPACES }, (_, position) => namespaceObject(position)),
  ]);
  let clock = 0;
  let slices = 0;
  // Counted from the first change after the first full evaluation.
  let armed = false;
  const tracker = new RiskTracker(
    indexed.index,
    {
      debounceMs: 0,
      sliceBudgetMs: 1,
      maxWorkloadsPerSlice: 4,
      serving: () => true,
      pauseWhileServing: () => {
        if (!armed) return 0;
        const action = betweenSlices[++slices];
        // After this slice has returned, before the next one: as a watch event would arrive.
        if (action) queueMicrotask(action);
        return 0;
      },
    },
    () => (clock += 0.25),
  );
  indexed.ingestor.onChange((object, removed) => tracker.observe(object, removed));
  for (const object of deployments) indexed.ingestor.upsert(object);
  tracker.start();
  await tracker.idle();
  armed = true;
  const evaluationsAtArm = tracker.status().evaluations;
  return {
    ...indexed,
    tracker,
    deployments,
    slicesSoFar: () => slices,
    evaluationsSinceArmed: () => tracker.status().evaluations - evaluationsAtArm,
  };
}

/** What a fresh evaluation of every workload says: `namespace/name outcome` per finding. */
function freshFindings(cluster: Awaited<ReturnType<typeof slicedCluster>>): string[] {
  return cluster.deployments
    .flatMap((object) =>
      evaluateWorkload(cluster.index, keepWorkload(object)).findings.map(
        (finding) => `${object.metadata?.namespace}/${object.metadata?.name} ${finding.outcome}`,
      ),
    )
    .sort();
}

function trackedFindings(cluster: Awaited<ReturnType<typeof slicedCluster>>): string[] {
  return Array.from({ length: NAMESPACES }, (_, position) => `ns-${position}`)
    .flatMap((namespace) =>
      cluster.tracker
        .risksInNamespace(namespace)
        .flatMap((risk) =>
          risk.findings.map((finding) => `${namespace}/${risk.workload.name} ${finding.outcome}`),
        ),
    )
    .sort();
}

describe('a cluster-wide policy change in slices', () => {
  it('reads no namespace when observed; the index answers with the new version meanwhile; then all are found', async () => {
    const cluster = await slicedCluster();
    const labelReads = jest.spyOn(cluster.index, 'labelsOfNamespace');
    cluster.ingestor.upsert(requireOwner('Enforce', GOLD));
    expect(labelReads).not.toHaveBeenCalled();
    labelReads.mockRestore();
    expect(cluster.tracker.status().pending).toBeGreaterThan(0);
    // Every reader of the index sees the policy in every namespace it selects before any slice ran.
    expect(
      cluster.index.constraintsForNamespace('ns-117').map((constraint) => constraint.source.name),
    ).toContain('require-owner');
    expect(
      cluster.index.constraintsForNamespace('ns-118').map((constraint) => constraint.source.name),
    ).not.toContain('require-owner');
    await cluster.tracker.idle();
    expect(cluster.slicesSoFar()).toBeGreaterThan(5);
    expect(cluster.tracker.status().pending).toBe(0);
    expect(trackedFindings(cluster)).toHaveLength(NAMESPACES / 3);
    expect(trackedFindings(cluster)).toEqual(freshFindings(cluster));
    expect(cluster.tracker.atRiskCount('ns-0')).toBe(1);
    expect(cluster.tracker.atRiskCount('ns-1')).toBe(0);
  });

  it('a delete arriving mid-scan wins: what the deleted version had left to find is not evaluated', async () => {
    const policy = requireOwner('Enforce', GOLD);
    let evaluatedWhenDeleted = -1;
    const cluster = await slicedCluster({
      1: () => {
        evaluatedWhenDeleted = cluster.evaluationsSinceArmed();
        cluster.ingestor.delete(policy);
      },
    });
    cluster.ingestor.upsert(policy);
    await cluster.tracker.idle();
    // Deleted while its reach was being worked out: nothing of it evaluated yet.
    expect(evaluatedWhenDeleted).toBe(0);
    expect(freshFindings(cluster)).toEqual([]);
    expect(trackedFindings(cluster)).toEqual([]);
    expect(cluster.tracker.countsByNamespace()).toEqual([]);
    // Only the gold Deployments found before the delete were evaluated, not the 40 of the whole reach.
    expect(cluster.evaluationsSinceArmed()).toBeGreaterThan(0);
    expect(cluster.evaluationsSinceArmed()).toBeLessThan(NAMESPACES / 3);
  });

  it('a delete arriving after some workloads were found failing wins: they are evaluated again', async () => {
    const policy = requireOwner('Enforce', {});
    let evaluatedWhenDeleted = -1;
    const cluster = await slicedCluster({
      12: () => {
        evaluatedWhenDeleted = cluster.evaluationsSinceArmed();
        cluster.ingestor.delete(policy);
      },
    });
    cluster.ingestor.upsert(policy);
    await cluster.tracker.idle();
    expect(evaluatedWhenDeleted).toBeGreaterThan(0);
    expect(evaluatedWhenDeleted).toBeLessThan(NAMESPACES);
    expect(trackedFindings(cluster)).toEqual([]);
  });

  it('a second update arriving mid-scan wins, whether it narrows or widens the reach', async () => {
    // Enforced on every namespace, then mid-scan audited on the gold ones only: rejected nowhere.
    const narrowed = await slicedCluster({ 1: () => narrowed.ingestor.upsert(requireOwner('Audit', GOLD)) });
    narrowed.ingestor.upsert(requireOwner('Enforce', {}));
    await narrowed.tracker.idle();
    expect(freshFindings(narrowed).every((finding) => finding.endsWith(' warned'))).toBe(true);
    expect(freshFindings(narrowed)).toHaveLength(NAMESPACES / 3);
    expect(trackedFindings(narrowed)).toEqual(freshFindings(narrowed));

    // Gold only, then mid-scan every namespace: the namespaces the first scan had not reached count.
    let evaluatedWhenWidened = -1;
    const widened = await slicedCluster({
      1: () => {
        evaluatedWhenWidened = widened.evaluationsSinceArmed();
        widened.ingestor.upsert(requireOwner('Enforce', {}));
      },
    });
    widened.ingestor.upsert(requireOwner('Enforce', GOLD));
    await widened.tracker.idle();
    expect(evaluatedWhenWidened).toBe(0);
    expect(freshFindings(widened)).toHaveLength(NAMESPACES);
    expect(trackedFindings(widened)).toEqual(freshFindings(widened));
  });

  it('created, updated, deleted and created again between slices: the last version holds', async () => {
    const cluster = await slicedCluster({
      1: () => cluster.ingestor.upsert(requireOwner('Audit', {})),
      3: () => cluster.ingestor.delete(requireOwner('Audit', {})),
      9: () => cluster.ingestor.upsert(requireOwner('Audit', {})),
      14: () => cluster.ingestor.upsert(requireOwner('Enforce', GOLD)),
    });
    cluster.ingestor.upsert(requireOwner('Enforce', {}));
    await cluster.tracker.idle();
    expect(cluster.slicesSoFar()).toBeGreaterThanOrEqual(14);
    expect(freshFindings(cluster)).toHaveLength(NAMESPACES / 3);
    expect(freshFindings(cluster).every((finding) => finding.endsWith(' rejected'))).toBe(true);
    expect(trackedFindings(cluster)).toEqual(freshFindings(cluster));
  });

  it('a one-shot evaluation finishes the scans before it evaluates (offline commands)', async () => {
    const cluster = await slicedCluster();
    cluster.ingestor.upsert(requireOwner('Enforce', GOLD));
    cluster.tracker.evaluatePendingNow();
    expect(cluster.tracker.status().pending).toBe(0);
    expect(trackedFindings(cluster)).toEqual(freshFindings(cluster));
    expect(trackedFindings(cluster)).toHaveLength(NAMESPACES / 3);
  });
});
