import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  ADMITTED_WORKLOAD_RESOURCES,
  isRepresentedByOwner,
  KYVERNO_AUTOGEN_KINDS,
  podCountOf,
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

describe('one table of workload facts', () => {
  it('says how many pods each kind asks for at once: its count field, else 1', () => {
    const cases: Array<[string, Record<string, unknown>, number]> = [
      ['Pod', {}, 1],
      ['Deployment', { replicas: 3 }, 3],
      ['StatefulSet', { replicas: 0 }, 0],
      ['ReplicaSet', {}, 1],
      ['ReplicationController', { replicas: 2 }, 2],
      ['Job', { parallelism: 4 }, 4],
      ['CronJob', { jobTemplate: { spec: { parallelism: 5 } } }, 5],
      ['DaemonSet', { replicas: 9 }, 1],
      ['Deployment', { replicas: 'three' }, 1],
      ['ConfigMap', { replicas: 3 }, 1],
    ];
    for (const [kind, spec, expected] of cases)
      expect({ kind, spec, count: podCountOf({ kind, spec }) }).toEqual({ kind, spec, count: expected });
  });

  it("lists Kyverno's default auto-generation controllers with their resources", () => {
    expect(KYVERNO_AUTOGEN_KINDS.map((entry) => `${entry.group}/${entry.plural}`)).toEqual([
      'apps/deployments',
      'apps/statefulsets',
      'apps/daemonsets',
      'apps/replicasets',
      'batch/jobs',
      'batch/cronjobs',
      '/replicationcontrollers',
    ]);
  });

  it('is the only place that lists the pod controllers', () => {
    // A list of three or more controller kinds anywhere else repeats a fact of this table.
    const repeated =
      /'(Deployment|StatefulSet|DaemonSet|ReplicaSet|Job|CronJob)'(\s*,\s*'(Deployment|StatefulSet|DaemonSet|ReplicaSet|Job|CronJob)'){2,}/;
    const services = path.join(__dirname, '..');
    const files = readdirSync(services, { recursive: true, encoding: 'utf8' }).filter(
      (file) => file.endsWith('.ts') && !file.endsWith('.test.ts') && !file.includes('fixtures'),
    );
    const offenders = files.filter(
      (file) =>
        file !== path.join('model', 'workload-kinds.ts') &&
        repeated.test(readFileSync(path.join(services, file), 'utf8')),
    );
    expect(offenders).toEqual([]);
  });
});
