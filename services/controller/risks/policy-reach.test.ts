import type { Constraint } from '../../model/constraint';
import type { Labels } from '../../model/kubernetes';
import { PolicyReachScans, type ReachSource } from './policy-reach';
import type { WorkloadIdentity } from './workload-risk';

// Which workloads a changed cluster-wide policy reaches, worked out a few namespaces at a time
// (issue 35): the scan finds exactly what one pass over every namespace finds, stops when told, and
// a later change of the same policy replaces its unfinished scan.

/** `count` namespaces `ns-0`…, every third labelled `tier: gold`, each with a Deployment and a Service. */
function keptCluster(count: number): ReachSource & { labelReads: number } {
  const namespaces = new Map<string, string[]>();
  const identities = new Map<string, WorkloadIdentity>();
  for (let position = 0; position < count; position++) {
    const namespace = `ns-${position}`;
    const keys: string[] = [];
    for (const [group, kind] of [
      ['apps', 'Deployment'],
      ['', 'Service'],
    ] as const) {
      const key = `${group}/${kind}/${namespace}/web`;
      identities.set(key, { group, kind, namespace, name: 'web' });
      keys.push(key);
    }
    namespaces.set(namespace, keys);
  }
  const source = {
    labelReads: 0,
    namespaces: () => namespaces.entries(),
    identityOf: (key: string) => identities.get(key),
    labelsOfNamespace: (namespace: string): Labels => {
      source.labelReads++;
      return Number(namespace.slice('ns-'.length)) % 3 === 0 ? { tier: 'gold' } : {};
    },
  };
  return source;
}

/** A cluster-wide constraint on Deployments of the namespaces labelled `tier: gold`. */
function goldDeployments(id: string): Constraint {
  return {
    id,
    scope: { kind: 'cluster', namespaceSelector: { matchLabels: { tier: 'gold' } } },
    resourceTargets: [{ group: 'apps', resource: 'deployments' }],
  } as unknown as Constraint;
}

/** A cluster-wide constraint on every kind in every namespace. */
function everything(id: string): Constraint {
  return { id, scope: { kind: 'cluster' } } as unknown as Constraint;
}

function reachedAll(scans: PolicyReachScans): string[] {
  const reached: string[] = [];
  scans.advance((key) => reached.push(key));
  return reached;
}

describe('the reach of a cluster-wide policy, in slices', () => {
  it('finds the workloads of the kinds it targets in the namespaces it admits', () => {
    const scans = new PolicyReachScans(keptCluster(30));
    scans.start('kyverno.io/ClusterPolicy//gold', [goldDeployments('gold')]);
    expect(scans.size).toBe(1);
    const reached = reachedAll(scans);
    expect(scans.size).toBe(0);
    expect(reached).toHaveLength(10);
    expect(reached.every((key) => key.startsWith('apps/Deployment/'))).toBe(true);
    expect(reached).toContain('apps/Deployment/ns-27/web');
    expect(reached).not.toContain('apps/Deployment/ns-28/web');
  });

  it('starting a scan reads no namespace; each step reads a few and stops when told', () => {
    const cluster = keptCluster(100);
    const scans = new PolicyReachScans(cluster);
    scans.start('policy', [everything('all')]);
    expect(cluster.labelReads).toBe(0);
    const reached: string[] = [];
    scans.advance(
      (key) => reached.push(key),
      () => false,
    );
    // One check's worth of namespaces, then it stopped: the rest is left for the next slice.
    expect(cluster.labelReads).toBeGreaterThan(0);
    expect(cluster.labelReads).toBeLessThan(100);
    expect(scans.size).toBe(1);
    let steps = 1;
    while (scans.size > 0) {
      scans.advance(
        (key) => reached.push(key),
        () => false,
      );
      steps++;
    }
    expect(steps).toBeGreaterThan(5);
    expect(new Set(reached).size).toBe(200);
    expect(cluster.labelReads).toBe(100);
  });

  it('a later change of the same policy replaces its unfinished scan; a deletion cancels it', () => {
    const cluster = keptCluster(60);
    const scans = new PolicyReachScans(cluster);
    scans.start('policy', [everything('v1')]);
    scans.advance(
      () => undefined,
      () => false,
    );
    scans.start('policy', [goldDeployments('v2')]);
    scans.start('other', [goldDeployments('other')]);
    expect(scans.size).toBe(2);
    scans.cancel('other');
    // The replacing scan starts over from the first namespace and finds what v2 reaches, all of it.
    expect(reachedAll(scans).sort()).toEqual(
      Array.from({ length: 20 }, (_, step) => `apps/Deployment/ns-${step * 3}/web`).sort(),
    );
    scans.start('policy', []);
    expect(scans.size).toBe(0);
  });
});
