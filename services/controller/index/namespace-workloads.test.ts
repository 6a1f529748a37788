import { ConstraintIndex, type WorkloadRecord } from './constraint-index';

// The index's workloads of a namespace (what `affected_workloads` names): one or many per namespace,
// through adds, replacements and removals, the lone one held without a map (issue 33, memory).

const record = (namespace: string, kind: string, name: string, app = name): WorkloadRecord => ({
  namespace,
  kind,
  name,
  podLabels: { app },
});

const namesIn = (index: ConstraintIndex, namespace: string) =>
  index
    .workloadsInNamespace(namespace)
    .map((workload) => `${workload.kind}/${workload.name}`)
    .sort();

describe("the index's workloads of a namespace", () => {
  it('keeps one or many, replaces by kind and name, and removes each once', () => {
    const index = new ConstraintIndex();
    expect(index.workloadsInNamespace('shop')).toEqual([]);
    index.setWorkload(record('shop', 'Deployment', 'web'));
    expect(index.workloadsInNamespace('shop')).toEqual([record('shop', 'Deployment', 'web')]);
    // The same kind and name replaces; another kind of the same name is another workload.
    index.setWorkload(record('shop', 'Deployment', 'web', 'web-v2'));
    expect(index.workloadsInNamespace('shop')).toEqual([record('shop', 'Deployment', 'web', 'web-v2')]);
    index.setWorkload(record('shop', 'StatefulSet', 'web'));
    index.setWorkload(record('shop', 'Deployment', 'api'));
    index.setWorkload(record('billing', 'Deployment', 'web'));
    expect(namesIn(index, 'shop')).toEqual(['Deployment/api', 'Deployment/web', 'StatefulSet/web']);
    expect(namesIn(index, 'billing')).toEqual(['Deployment/web']);
    // Removing what is not there changes nothing, not even the revision.
    const revision = index.revision;
    index.removeWorkload('shop', 'DaemonSet', 'web');
    index.removeWorkload('billing', 'Deployment', 'api');
    index.removeWorkload('nowhere', 'Deployment', 'web');
    expect(index.revision).toBe(revision);
    index.removeWorkload('shop', 'Deployment', 'web');
    index.removeWorkload('shop', 'StatefulSet', 'web');
    expect(index.workloadsInNamespace('shop')).toEqual([record('shop', 'Deployment', 'api')]);
    expect(index.revision).toBe(revision + 2);
    // Growing again from one keeps both.
    index.setWorkload(record('shop', 'CronJob', 'report'));
    expect(namesIn(index, 'shop')).toEqual(['CronJob/report', 'Deployment/api']);
    index.removeWorkload('shop', 'Deployment', 'api');
    index.removeWorkload('shop', 'CronJob', 'report');
    index.removeWorkload('billing', 'Deployment', 'web');
    expect(index.workloadsInNamespace('shop')).toEqual([]);
    expect(index.workloadsInNamespace('billing')).toEqual([]);
  });
});
