import type { KubernetesObject } from '../../../model/kubernetes';
import { indexObjects } from '../../../../test/support/controller-fixtures';
import { buildAdmissionCheck } from '../admission-check';

// Kyverno rules on objects: patterns through auto-generation, podSecurity, cel, and what is unknown.

function clusterPolicy(name: string, rule: Record<string, unknown>, action = 'Enforce'): KubernetesObject {
  return {
    apiVersion: 'kyverno.io/v1',
    kind: 'ClusterPolicy',
    metadata: { name },
    spec: {
      validationFailureAction: action,
      rules: [{ name: 'check', match: { any: [{ resources: { kinds: ['Pod'] } }] }, ...rule }],
    },
  };
}

const namespace: KubernetesObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } };

function deployment(containers: Array<Record<string, unknown>>): KubernetesObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'team' },
    spec: { template: { metadata: { labels: { app: 'web' } }, spec: { containers } } },
  };
}

function check(policy: KubernetesObject, object: KubernetesObject) {
  const { index } = indexObjects([namespace, policy]);
  return buildAdmissionCheck(index, { object, operation: 'CREATE' }).constraints.filter(
    (entry) => entry.sourceKind === 'ClusterPolicy',
  );
}

const latestTag = clusterPolicy('disallow-latest-tag', {
  validate: {
    message: "Using a mutable image tag e.g. 'latest' is not allowed.",
    pattern: { spec: { containers: [{ image: '!*:latest' }] } },
  },
});

describe('Kyverno rule verdicts', () => {
  it('allows an existing violation on an UPDATE of an Enforce rule, as Kyverno does, unless the rule says not to', () => {
    const latest = deployment([{ name: 'web', image: 'nginx:latest' }]);
    const pinned = deployment([{ name: 'web', image: 'nginx:1.25' }]);
    const update = (policy: KubernetesObject, oldObject: KubernetesObject) =>
      buildAdmissionCheck(indexObjects([namespace, policy]).index, {
        object: latest,
        oldObject,
        operation: 'UPDATE',
      }).constraints.filter((entry) => entry.sourceKind === 'ClusterPolicy');
    // The stored object failed too: Kyverno skips the rule.
    expect(update(latestTag, latest)).toEqual([]);
    // The update brings the violation: it is one.
    expect(update(latestTag, pinned)).toMatchObject([{ verdict: 'violates' }]);
    // Audit rules and rules that refuse existing violations are judged on the new object alone.
    expect(
      update(
        clusterPolicy(
          'audit',
          { validate: (latestTag.spec as { rules: Array<{ validate: unknown }> }).rules[0].validate },
          'Audit',
        ),
        latest,
      ),
    ).toMatchObject([{ verdict: 'violates' }]);
    const strict = clusterPolicy('strict', {
      validate: {
        ...(latestTag.spec as { rules: Array<{ validate: Record<string, unknown> }> }).rules[0].validate,
        allowExistingViolations: false,
      },
    });
    expect(update(strict, latest)).toMatchObject([{ verdict: 'violates' }]);
  });

  it('checks a Deployment through its pod template for a Pod rule (auto-generation)', () => {
    const [entry] = check(
      latestTag,
      deployment([
        { name: 'web', image: 'nginx:1.25' },
        { name: 'side', image: 'proxy:latest' },
      ]),
    );
    expect(entry).toMatchObject({ verdict: 'violates', severity: 'Critical' });
    expect(entry.evidence).toEqual([
      {
        path: 'spec.template.spec.containers[1].image',
        message: `container "side": Using a mutable image tag e.g. 'latest' is not allowed. (image is "proxy:latest")`,
      },
    ]);
    expect(entry.summary).toMatch(/^will be rejected: container "side": Using a mutable image tag/);
  });

  it('passes when the pattern holds, and an Audit rule only warns', () => {
    expect(check(latestTag, deployment([{ name: 'web', image: 'nginx:1.25' }]))[0].verdict).toBe('passes');
    const audit = { ...latestTag, spec: { ...(latestTag.spec as object), validationFailureAction: 'Audit' } };
    const [entry] = check(audit, deployment([{ name: 'web', image: 'nginx:latest' }]));
    expect(entry).toMatchObject({ verdict: 'violates', severity: 'Warning' });
  });

  it('anyPattern passes when one of the patterns holds', () => {
    const policy = clusterPolicy('probes', {
      validate: {
        message: 'a probe is required',
        anyPattern: [
          { spec: { containers: [{ readinessProbe: {} }] } },
          { spec: { containers: [{ livenessProbe: {} }] } },
        ],
      },
    });
    expect(
      check(policy, deployment([{ name: 'web', livenessProbe: { httpGet: { port: 80 } } }]))[0].verdict,
    ).toBe('passes');
    expect(check(policy, deployment([{ name: 'web' }]))[0].verdict).toBe('violates');
  });

  it('validate.podSecurity uses the Pod Security Standards', () => {
    const policy = clusterPolicy('psa', {
      validate: { podSecurity: { level: 'baseline', version: 'latest' } },
    });
    const [entry] = check(policy, deployment([{ name: 'web', securityContext: { privileged: true } }]));
    expect(entry.evidence).toEqual([
      {
        path: 'spec.template.spec.containers[0].securityContext.privileged',
        message: 'container "web" is privileged',
      },
    ]);
  });

  it('validate.cel runs the expressions on the pod template', () => {
    const policy = clusterPolicy('cel', {
      validate: {
        cel: {
          expressions: [
            {
              expression: 'object.spec.containers.all(c, c.image.startsWith("registry.example.com/"))',
              message: 'images must come from registry.example.com',
            },
          ],
        },
      },
    });
    expect(
      check(policy, deployment([{ name: 'web', image: 'docker.io/nginx' }]))[0].evidence[0].message,
    ).toBe('images must come from registry.example.com');
    expect(check(policy, deployment([{ name: 'web', image: 'registry.example.com/web' }]))[0].verdict).toBe(
      'passes',
    );
  });

  it('is unknown for what depends on the requester or on cluster data', () => {
    const requester = clusterPolicy('requester', {
      validate: {
        deny: {
          conditions: { any: [{ key: '{{ request.userInfo.username }}', operator: 'Equals', value: 'x' }] },
        },
      },
    });
    expect(check(requester, deployment([{ name: 'web' }]))[0]).toMatchObject({
      verdict: 'unknown',
      reason: expect.stringContaining('who makes the request') as unknown,
    });
    const configMap = clusterPolicy('config', {
      context: [{ name: 'allowed', configMap: { name: 'registries', namespace: 'kyverno' } }],
      validate: {
        deny: {
          conditions: { any: [{ key: '{{ allowed.data.list }}', operator: 'Equals', value: 'x' }] },
        },
      },
    });
    expect(check(configMap, deployment([{ name: 'web' }]))[0]).toMatchObject({
      verdict: 'unknown',
      reason: expect.stringContaining('allowed') as unknown,
    });
  });
});

describe('Kyverno rules auto-generated for pod controllers, as Kyverno 1.19 generates them', () => {
  const keepInjection = clusterPolicy('prevent-disabling-injection', {
    validate: {
      message: 'Pods may not disable sidecar injection.',
      pattern: { metadata: { '=(annotations)': { '=(sidecar.istio.io/inject)': '!false' } } },
    },
  });
  const job = (template: Record<string, unknown>): KubernetesObject => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'migrate', namespace: 'team' },
    spec: { template },
  });
  const containers = [{ name: 'migrate', image: 'migrate:1.0' }];

  it('passes a controller whose pod template has no metadata, as admission does', () => {
    // The API server sends the template's metadata to admission as {} (an empty Go struct), so the
    // generated rule's pattern on spec.template.metadata passes; only the Kyverno CLI, reading the
    // manifest as written, fails it (test/fidelity/kyverno-allow-list.yaml).
    const [entry] = check(keepInjection, job({ spec: { containers } }));
    expect(entry.verdict).toBe('passes');
    const [disabled] = check(
      keepInjection,
      job({ metadata: { annotations: { 'sidecar.istio.io/inject': 'false' } }, spec: { containers } }),
    );
    expect(disabled.verdict).toBe('violates');
  });

  it('does not reach a controller at a version Kyverno does not generate for (batch/v1beta1 CronJob)', () => {
    const cronJob = (apiVersion: string): KubernetesObject => ({
      apiVersion,
      kind: 'CronJob',
      metadata: { name: 'old', namespace: 'team' },
      spec: { schedule: '0 3 * * *', jobTemplate: { spec: { template: { spec: { containers } } } } },
    });
    expect(check(latestTag, cronJob('batch/v1')).map((entry) => entry.verdict)).toEqual(['passes']);
    expect(check(latestTag, cronJob('batch/v1beta1'))).toEqual([]);
  });
});
