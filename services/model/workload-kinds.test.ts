import {
  ADMITTED_WORKLOAD_RESOURCES,
  isRepresentedByOwner,
  LISTED_WORKLOAD_KINDS,
  workloadKind,
  workloadLabels,
} from './workload-kinds';

const podTemplate = (labels: Record<string, unknown>) => ({ template: { metadata: { labels } } });

// The controller object's own labels differ from its pods' labels in every case, so a test
// passes only if the right set is read.
const OWN = { 'app.kubernetes.io/managed-by': 'helm' };
const POD = { app: 'web', tier: 'frontend' };

describe('workloadLabels', () => {
  it.each([
    ['apps', 'Deployment'],
    ['apps', 'StatefulSet'],
    ['apps', 'DaemonSet'],
    ['apps', 'ReplicaSet'],
    ['batch', 'Job'],
  ])('reads the pod-template labels of %s/%s', (group, kind) => {
    const object = { metadata: { labels: OWN }, spec: podTemplate(POD) };
    expect(workloadLabels({ group, kind }, object)).toEqual(POD);
  });

  it('reads spec.jobTemplate.spec.template labels of a CronJob', () => {
    const object = {
      metadata: { labels: OWN },
      spec: { jobTemplate: { metadata: { labels: { job: 'x' } }, spec: podTemplate(POD) } },
    };
    expect(workloadLabels({ group: 'batch', kind: 'CronJob' }, object)).toEqual(POD);
  });

  it.each([
    ['', 'Pod'],
    ['', 'Service'],
    ['', 'ConfigMap'],
  ])('reads the own labels of %s/%s', (group, kind) => {
    const object = { metadata: { labels: POD }, spec: podTemplate(OWN) };
    expect(workloadLabels({ group, kind }, object)).toEqual(POD);
  });

  it('uses own labels for a custom kind named Deployment outside the apps group', () => {
    const object = { metadata: { labels: OWN }, spec: podTemplate(POD) };
    expect(workloadLabels({ group: 'example.com', kind: 'Deployment' }, object)).toEqual(OWN);
  });

  it('gives no labels for a Deployment without template labels (never falls back to its own)', () => {
    expect(
      workloadLabels({ group: 'apps', kind: 'Deployment' }, { metadata: { labels: OWN }, spec: {} }),
    ).toEqual({});
  });

  it('keeps the string entries of a malformed label map', () => {
    const object = { metadata: { labels: { app: 'web', replicas: 3, broken: null } } };
    expect(workloadLabels({ group: '', kind: 'Pod' }, object)).toEqual({ app: 'web' });
  });

  it('copes with a missing object', () => {
    expect(workloadLabels({ group: 'apps', kind: 'Deployment' }, null)).toEqual({});
    expect(workloadLabels(null, undefined)).toEqual({});
  });
});

describe('the workload kinds table', () => {
  it('lists what a developer writes in affected_workloads, Jobs included', () => {
    expect(LISTED_WORKLOAD_KINDS.map((entry) => entry.kind)).toEqual([
      'Pod',
      'Deployment',
      'StatefulSet',
      'DaemonSet',
      'Job',
      'CronJob',
    ]);
  });

  it('registers the webhook for every listed kind, and for ReplicaSets', () => {
    const admitted = ADMITTED_WORKLOAD_RESOURCES.map((target) => target.resource);
    for (const entry of LISTED_WORKLOAD_KINDS) expect(admitted).toContain(entry.plural);
    expect(admitted).toEqual([
      'pods',
      'deployments',
      'statefulsets',
      'daemonsets',
      'replicasets',
      'jobs',
      'cronjobs',
    ]);
  });

  it('represents an owned Pod or Job by its owner, but never an owned Deployment', () => {
    const owned = { metadata: { name: 'x', ownerReferences: [{ kind: 'CronJob', name: 'nightly' }] } };
    expect(isRepresentedByOwner(workloadKind('batch', 'Job')!, owned)).toBe(true);
    expect(isRepresentedByOwner(workloadKind('', 'Pod')!, owned)).toBe(true);
    expect(isRepresentedByOwner(workloadKind('apps', 'Deployment')!, owned)).toBe(false);
    expect(isRepresentedByOwner(workloadKind('batch', 'Job')!, { metadata: { name: 'x' } })).toBe(false);
  });
});
