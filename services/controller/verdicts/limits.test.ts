import fc from 'fast-check';
import type { KubernetesObject } from '../../model/kubernetes';
import { indexObjects } from '../../../test/support/controller-fixtures';
import { buildAdmissionCheck } from './admission-check';

// ResourceQuota and LimitRange verdicts, through the admission check as the webhook asks it.

const namespace: KubernetesObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } };

function quota(
  hard: Record<string, string>,
  used: Record<string, string>,
  extra: Record<string, unknown> = {},
): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'compute', namespace: 'team' },
    spec: { hard, ...extra },
    status: { hard, used },
  };
}

function limitRange(item: Record<string, unknown>): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name: 'bounds', namespace: 'team' },
    spec: { limits: [{ type: 'Container', ...item }] },
  };
}

function deployment(
  replicas: number,
  resources: Record<string, unknown>,
  podSpec: Record<string, unknown> = {},
): KubernetesObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'team' },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image: 'web:1', resources }], ...podSpec },
      },
    },
  };
}

function check(objects: KubernetesObject[], object: KubernetesObject) {
  const { index } = indexObjects([namespace, ...objects]);
  return buildAdmissionCheck(index, { object, operation: 'CREATE' }).constraints;
}

describe('ResourceQuota verdicts', () => {
  const cpuQuota = quota({ 'requests.cpu': '4', pods: '10' }, { 'requests.cpu': '3500m', pods: '3' });

  it('multiplies the pod template by replicas and compares with hard - used', () => {
    const [entry] = check([cpuQuota], deployment(2, { requests: { cpu: '400m' } }));
    expect(entry).toMatchObject({ verdict: 'violates', severity: 'Critical' });
    expect(entry.evidence[0]).toEqual({
      path: 'spec.template.spec.containers',
      message: 'would exceed the quota: needs 800m requests.cpu (2 pods), 500m left of 4',
    });
    expect(entry.summary).toBe(
      'its pods will be rejected: would exceed the quota: needs 800m requests.cpu (2 pods), 500m left of 4 (ResourceQuota "compute")',
    );
  });

  it('passes when what is left suffices', () => {
    const [entry] = check([cpuQuota], deployment(1, { requests: { cpu: '500m' } }));
    expect(entry).toMatchObject({ verdict: 'passes', evidence: [] });
  });

  it('requires every container to set what a compute quota tracks', () => {
    const [entry] = check([cpuQuota], deployment(1, {}));
    expect(entry.verdict).toBe('violates');
    expect(entry.evidence).toEqual([
      {
        path: 'spec.template.spec.containers[0].resources.requests.cpu',
        message:
          'container "web" sets no cpu request; a quota on requests.cpu requires one on every container',
      },
    ]);
  });

  it('counts a Job by its parallelism', () => {
    const job: KubernetesObject = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'batch', namespace: 'team' },
      spec: {
        parallelism: 8,
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [{ name: 'run', resources: { requests: { cpu: '100m' } } }],
          },
        },
      },
    };
    const [entry] = check([quota({ pods: '10' }, { pods: '3' })], job);
    expect(entry.evidence[0].message).toBe('would exceed the quota: needs 8 pods (8 pods), 7 left of 10');
  });

  it('is not listed for pods outside its scope', () => {
    const terminating = quota({ 'requests.cpu': '1' }, {}, { scopes: ['Terminating'] });
    expect(check([terminating], deployment(1, { requests: { cpu: '2' } }))).toEqual([]);
    const withDeadline = deployment(1, { requests: { cpu: '2' } }, { activeDeadlineSeconds: 60 });
    expect(check([terminating], withDeadline)[0].verdict).toBe('violates');
  });

  it('honours PriorityClass scope selectors', () => {
    const high = quota(
      { pods: '0' },
      {},
      {
        scopeSelector: {
          matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }],
        },
      },
    );
    expect(check([high], deployment(1, {}))).toEqual([]);
    expect(check([high], deployment(1, {}, { priorityClassName: 'high' }))[0].verdict).toBe('violates');
  });

  it('charges a count/ key for the object itself on create', () => {
    const secrets = quota({ 'count/secrets': '2' }, { 'count/secrets': '2' });
    const secret: KubernetesObject = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', namespace: 'team' },
    };
    const [entry] = check([secrets], secret);
    expect(entry).toMatchObject({ verdict: 'violates', severity: 'Critical' });
    expect(entry.summary).toMatch(
      /^will be rejected: would exceed the quota: needs 1 count\/secrets, 0 left of 2/,
    );
    expect(check([secrets], { ...secret, kind: 'ConfigMap' })).toEqual([]);
  });

  it('uses the LimitRange defaults before counting, as the API server does', () => {
    const defaults = limitRange({ defaultRequest: { cpu: '300m' } });
    const entries = check([cpuQuota, defaults], deployment(2, {}));
    const quotaEntry = entries.find((entry) => entry.sourceKind === 'ResourceQuota');
    expect(quotaEntry?.evidence[0].message).toBe(
      'would exceed the quota: needs 600m requests.cpu (2 pods), 500m left of 4',
    );
  });
});

describe('LimitRange verdicts', () => {
  it('rejects a limit above max and names the container', () => {
    const [entry] = check(
      [limitRange({ max: { memory: '1Gi' } })],
      deployment(1, { limits: { memory: '2Gi' } }),
    );
    expect(entry).toMatchObject({ verdict: 'violates', severity: 'Critical' });
    expect(entry.evidence).toEqual([
      {
        path: 'spec.template.spec.containers[0].resources.limits.memory',
        message: 'container "web" has a memory limit of 2Gi; the maximum per Container is 1Gi',
      },
      // The request defaults to the limit, and is over the maximum too.
      {
        path: 'spec.template.spec.containers[0].resources.requests.memory',
        message: 'container "web" requests 2Gi memory; the maximum per Container is 1Gi',
      },
    ]);
  });

  it('passes a container without limits when max defaults the limit, and notes the default', () => {
    const [entry] = check([limitRange({ max: { memory: '1Gi' } })], deployment(1, {}));
    expect(entry.verdict).toBe('passes');
    expect(entry.reason).toBe('will set defaults: container "web" requests.memory=1Gi, limits.memory=1Gi');
  });

  it('rejects a request below min', () => {
    const [entry] = check(
      [limitRange({ min: { cpu: '100m' } })],
      deployment(1, { requests: { cpu: '50m' } }),
    );
    expect(entry.evidence[0].message).toBe(
      'container "web" requests 50m cpu; the minimum per Container is 100m',
    );
  });

  it('enforces maxLimitRequestRatio', () => {
    const ratio = limitRange({ maxLimitRequestRatio: { cpu: '2' } });
    const [entry] = check([ratio], deployment(1, { requests: { cpu: '250m' }, limits: { cpu: '1' } }));
    expect(entry.evidence[0].message).toBe(
      'container "web" has a cpu limit 4 times its request; the maximum ratio is 2',
    );
    expect(
      check([ratio], deployment(1, { requests: { cpu: '500m' }, limits: { cpu: '1' } }))[0].verdict,
    ).toBe('passes');
  });

  it('hides what the LimitRange requires below the detailed level', () => {
    const { index } = indexObjects([namespace, limitRange({ max: { memory: '1Gi' } })]);
    const [entry] = buildAdmissionCheck(
      index,
      { object: deployment(1, { limits: { memory: '2Gi' } }), operation: 'CREATE' },
      { viewer: { level: 'summary' } },
    ).constraints;
    expect(entry.evidence[0].message).toBe(
      'container "web" has a memory limit of 2Gi; the maximum per Container is the LimitRange’s figure',
    );
  });
});

describe('LimitRange verdicts (property)', () => {
  it('setting each field the evidence names to the bound it names makes the object pass', () => {
    const millis = fc.integer({ min: 1, max: 4000 }).map((value) => `${value}m`);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2000 }),
        fc.integer({ min: 0, max: 2000 }),
        fc.option(millis, { nil: undefined }),
        fc.option(millis, { nil: undefined }),
        (minMillis, spread, request, limit) => {
          const bounds = { min: `${minMillis}m`, max: `${minMillis + spread}m` };
          const range = limitRange({ min: { cpu: bounds.min }, max: { cpu: bounds.max } });
          const resources: Record<string, Record<string, string>> = {};
          if (request) resources.requests = { cpu: request };
          if (limit) resources.limits = { cpu: limit };
          const [entry] = check([range], deployment(1, resources));
          if (entry.verdict === 'passes') return;
          const fixed = structuredClone(resources);
          for (const item of entry.evidence) {
            const kind = item.path.endsWith('.requests.cpu') ? 'requests' : 'limits';
            fixed[kind] = { ...fixed[kind], cpu: item.message.includes('minimum') ? bounds.min : bounds.max };
          }
          expect(check([range], deployment(1, fixed))[0]).toMatchObject({ verdict: 'passes' });
        },
      ),
      { numRuns: 150 },
    );
  });
});
