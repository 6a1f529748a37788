import path from 'node:path';
import { AdapterParseError } from '../../../model/constraint';
import { renderFullText, renderText } from '../../../model/text';
import { renderConstraintTexts } from '../../../../test/support/render-constraint';
import { resourceQuotaToConstraints } from './resourcequota';
import { fixtureConstraints, onlyConstraint } from '../../../../test/support/adapter-fixtures';

const constraintsOf = fixtureConstraints(
  resourceQuotaToConstraints,
  path.join(__dirname, 'fixtures/resourcequotas.yaml'),
);
const onlyConstraintOf = (name: string) => onlyConstraint(constraintsOf(name));

describe('resourcequota adapter', () => {
  it('turns a quota into one ResourceLimit constraint named after it, with exact metrics', () => {
    const constraint = onlyConstraintOf('compute');
    expect(constraint).toMatchObject({
      id: 'quota',
      name: 'compute',
      type: 'ResourceLimit',
      severity: 'Warning',
      effect: 'limit',
      adapter: 'resourcequota',
      scope: { kind: 'namespace', namespace: 'shop' },
      source: { kind: 'ResourceQuota', apiVersion: 'v1', name: 'compute', namespace: 'shop' },
    });
    expect(constraint.metrics).toEqual({
      cpu: { hard: '4', used: '3200m', unit: 'cores', percent_used: 80 },
      memory: { hard: '8Gi', used: '6Gi', unit: 'bytes', percent_used: 75 },
      pods: { hard: '10', used: '3', unit: 'count', percent_used: 30 },
    });
    expect(constraint.tags).toEqual(['quota', 'near-limit']);
    expect(renderFullText(constraint.summary)).toBe(
      'ResourceQuota "compute" limits cpu, memory, pods: CPU 3200m/4 (80%); Memory 6Gi/8Gi (75%); Pods 3/10 (30%)',
    );
    expect(renderFullText(constraint.remediationHint)).toBe(
      'lower the requests and limits of your workloads, or ask the owner of namespace shop for a bigger quota (ResourceQuota "compute": CPU at 80%)',
    );
  });

  it.each([
    ['at-74-9', 74.9, 'Info', ['quota']],
    ['at-75', 75, 'Warning', ['quota', 'near-limit']],
    ['at-89-9', 89.9, 'Warning', ['quota', 'near-limit']],
    ['at-90', 90, 'Critical', ['quota', 'near-limit']],
    ['rounds-up', 75, 'Warning', ['quota', 'near-limit']],
    ['pods-full', 100, 'Critical', ['quota', 'exhausted']],
  ])('grades %s (%d%% used) as %s', (name, percent, severity, tags) => {
    const constraint = onlyConstraintOf(name);
    expect(constraint.severity).toBe(severity);
    expect(constraint.tags).toEqual(tags);
    expect(Math.max(...Object.values(constraint.metrics ?? {}).map((metric) => metric.percent_used))).toBe(
      percent,
    );
  });

  it('keeps YAML numbers as their decimal text and says what to delete for object counts', () => {
    const constraint = onlyConstraintOf('pods-full');
    expect(constraint.metrics).toEqual({
      pods: { hard: '10', used: '10', unit: 'count', percent_used: 100 },
    });
    expect(renderFullText(constraint.remediationHint)).toMatch(/^delete objects you no longer need, /);
  });

  it('grades a quota without status as Info with zero usage', () => {
    const constraint = onlyConstraintOf('no-status');
    expect(constraint.severity).toBe('Info');
    expect(constraint.tags).toEqual(['quota']);
    expect(constraint.metrics).toEqual({
      'limits.cpu': { hard: '8', used: '0', unit: 'cores', percent_used: 0 },
      'limits.memory': { hard: '16Gi', used: '0', unit: 'bytes', percent_used: 0 },
    });
    expect(renderFullText(constraint.summary)).toBe(
      'ResourceQuota "no-status" limits limits.cpu, limits.memory: CPU limits 8; Memory limits 16Gi (no usage reported yet)',
    );
  });

  it('derives units and resource targets from object-count and storage keys', () => {
    const constraint = onlyConstraintOf('object-counts');
    const units = Object.fromEntries(
      Object.entries(constraint.metrics ?? {}).map(([resource, metric]) => [resource, metric.unit]),
    );
    expect(units).toEqual({
      'count/deployments.apps': 'count',
      'count/widgets.example.com': 'count',
      'gold.storageclass.storage.k8s.io/requests.storage': 'bytes',
      'requests.ephemeral-storage': 'bytes',
      'requests.nvidia.com/gpu': 'count',
      'requests.storage': 'bytes',
      secrets: 'count',
      'services.loadbalancers': 'count',
    });
    expect(constraint.metrics?.['count/widgets.example.com']).toEqual({
      hard: '5',
      used: '0',
      unit: 'count',
      percent_used: 0,
    });
    expect(constraint.metrics?.['gold.storageclass.storage.k8s.io/requests.storage'].percent_used).toBe(50);
    expect(constraint.resourceTargets).toEqual([
      { group: '', resource: 'pods' },
      { group: 'apps', resource: 'deployments' },
      { group: 'apps', resource: 'statefulsets' },
      { group: 'apps', resource: 'daemonsets' },
      { group: 'apps', resource: 'replicasets' },
      { group: 'batch', resource: 'jobs' },
      { group: 'batch', resource: 'cronjobs' },
      { group: 'example.com', resource: 'widgets' },
      { group: '', resource: 'persistentvolumeclaims' },
      { group: '', resource: 'secrets' },
      { group: '', resource: 'services' },
    ]);
    // The storage-class share is the closest to its limit (50%), so the hint is about storage.
    expect(renderFullText(constraint.remediationHint)).toMatch(/^delete unused PersistentVolumeClaims/);
  });

  it('yields nothing for a quota without hard limits', () => {
    expect(constraintsOf('empty-hard')).toEqual([]);
  });

  it('gives a kubectl step and a manual step for the namespace owner', () => {
    const [inspect, ask] = onlyConstraintOf('compute').remediation.steps;
    expect(inspect).toMatchObject({ type: 'cli', requiresPrivilege: 'developer', automated: true });
    expect(renderFullText(inspect.command ?? [])).toBe('kubectl get resourcequota compute -n shop -o yaml');
    expect(ask).toMatchObject({ type: 'manual', requiresPrivilege: 'namespace-admin', automated: false });
  });

  it('hides names and usage figures from other namespaces at summary level, shows them at full', () => {
    const constraint = onlyConstraintOf('compute');
    const foreign = renderConstraintTexts(constraint, { level: 'summary', namespace: 'some-other-ns' });
    expect(foreign).not.toMatch(/compute|shop|3200m|6Gi|8Gi|80%|75%|30%|3\/10/);
    expect(foreign).toContain('usage hidden');
    const own = renderText(constraint.summary, { level: 'summary', namespace: 'shop' });
    expect(own).toBe('ResourceQuota "compute" limits cpu, memory, pods: usage hidden');
    const detailed = renderText(constraint.summary, { level: 'detailed', namespace: 'some-other-ns' });
    expect(detailed).toContain('CPU 3200m/4 (80%)');
    expect(detailed).not.toContain('compute');
    const full = renderConstraintTexts(constraint, { level: 'full', namespace: 'some-other-ns' });
    for (const expected of ['compute', 'shop', '3200m/4 (80%)', '6Gi/8Gi (75%)', 'CPU at 80%']) {
      expect(full).toContain(expected);
    }
  });

  it.each([
    ['bad-hard-quantity', /spec\.hard\.cpu/],
    ['bad-used-quantity', /status\.used\.cpu/],
    ['hard-not-a-map', /spec\.hard/],
    ['negative-hard', /spec\.hard\.memory must not be negative/],
    ['boolean-quantity', /spec\.hard\.pods/],
    ['status-not-an-object', /status must be an object/],
    ['quota-no-spec', /no spec/],
    ['quota-no-namespace', /metadata\.namespace/],
  ])('rejects malformed %s with a parse error naming the field', (name, message) => {
    expect(() => constraintsOf(name)).toThrow(AdapterParseError);
    expect(() => constraintsOf(name)).toThrow(message);
  });

  it('is deterministic: the same object yields the same constraint', () => {
    expect(constraintsOf('object-counts')).toEqual(constraintsOf('object-counts'));
  });
});
