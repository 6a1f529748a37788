import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubernetesObject } from '../../../model/kubernetes';
import { indexObjects } from '../../../../test/support/controller-fixtures';
import { realworldDirectory } from '../../../../test/support/realworld-corpus';
import { buildAdmissionCheck } from '../admission-check';
import { evaluationIsolate } from '../guard/evaluation-isolate';

// Issue 21: what Kyverno decides, Forewarn decides the same way. The three verdicts that were wrong
// (each reproduced with the shape of the real policy, and with the real file when the shared corpus
// is present), then preconditions, deny conditions, foreach, podSecurity exclusions and Kyverno CEL.

const REALWORLD = realworldDirectory();

function clusterPolicy(name: string, rules: Array<Record<string, unknown>>): KubernetesObject {
  return {
    apiVersion: 'kyverno.io/v1',
    kind: 'ClusterPolicy',
    metadata: { name },
    spec: { validationFailureAction: 'Enforce', rules },
  };
}

const podRule = (rule: Record<string, unknown>) => ({
  name: 'check',
  match: { any: [{ resources: { kinds: ['Pod'] } }] },
  ...rule,
});

const namespace: KubernetesObject = {
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: 'team', labels: { tier: 'web' } },
};

function pod(spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): KubernetesObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'team', ...metadata }, spec };
}

function check(
  policy: KubernetesObject,
  object: KubernetesObject,
  operation: 'CREATE' | 'UPDATE' = 'CREATE',
) {
  const { index } = indexObjects([namespace, policy]);
  return buildAdmissionCheck(index, { object, operation }).constraints.filter(
    (entry) => entry.sourceKind === 'ClusterPolicy',
  );
}

const verdicts = (policy: KubernetesObject, object: KubernetesObject) =>
  check(policy, object).map((entry) => entry.verdict);

// The first evaluation of a process loads (under the test toolchain: compiles) the evaluators on the
// event loop and in the evaluation isolate, which on a busy machine takes longer than an object's
// deadline; the verdicts below are about Kyverno's semantics, so they are asked once everything runs.
beforeAll(async () => {
  await evaluationIsolate.started();
  const warm = clusterPolicy('warm-up', [
    podRule({
      preconditions: { all: [{ key: '{{ request.operation }}', operator: 'Equals', value: 'CREATE' }] },
      validate: {
        deny: {
          conditions: {
            any: [{ key: '{{ length(request.object.spec.containers) }}', operator: 'GreaterThan', value: 0 }],
          },
        },
      },
    }),
  ]);
  for (let attempt = 0; attempt < 5; attempt++)
    if (check(warm, pod({ containers: [{ name: 'a', image: 'nginx' }] }))[0]?.verdict === 'violates') break;
});

function corpusPolicy(file: string): KubernetesObject | undefined {
  if (!REALWORLD) return undefined;
  const full = path.join(REALWORLD, 'policies/kyverno', file);
  if (!existsSync(full)) return undefined;
  return parseAllDocuments(readFileSync(full, 'utf8'))[0].toJSON() as KubernetesObject;
}

const loadBalancerPolicy = clusterPolicy('require-encryption', [
  {
    name: 'aws-loadbalancer-has-ssl-cert',
    match: { any: [{ resources: { kinds: ['Service'] } }] },
    validate: {
      message: 'Service of type LoadBalancer must carry the annotation',
      pattern: {
        metadata: { annotations: { 'service.beta.kubernetes.io/aws-load-balancer-ssl-cert': '?*' } },
        '(spec)': { '(type)': 'LoadBalancer' },
      },
    },
  },
]);

function service(type: string, annotations: Record<string, string> = {}): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'team', annotations },
    spec: { type, ports: [{ port: 80 }] },
  };
}

const deprecatedApis = clusterPolicy('check-deprecated-apis', [
  {
    name: 'validate-v1-25-removals',
    match: { any: [{ resources: { kinds: ['batch/*/CronJob'] } }] },
    celPreconditions: [
      { name: 'allowed-api-versions', expression: "object.apiVersion in ['batch/v1beta1']" },
    ],
    validate: {
      cel: {
        expressions: [
          {
            expression: 'false',
            messageExpression: "object.apiVersion + '/' + object.kind + ' is deprecated'",
          },
        ],
      },
    },
  },
]);

function cronJob(apiVersion: string): KubernetesObject {
  return {
    apiVersion,
    kind: 'CronJob',
    metadata: { name: 'nightly', namespace: 'team' },
    spec: {
      schedule: '0 1 * * *',
      jobTemplate: { spec: { template: { spec: { containers: [{ name: 'job', image: 'busybox:1.36' }] } } } },
    },
  };
}

const appArmor = clusterPolicy('restrict-apparmor-profiles', [
  podRule({
    validate: {
      message: 'Specifying other AppArmor profiles is disallowed.',
      pattern: {
        '=(metadata)': {
          '=(annotations)': {
            '=(container.apparmor.security.beta.kubernetes.io/*)': 'runtime/default | localhost/*',
          },
        },
      },
    },
  }),
]);

const appArmorPod = (profile: string) =>
  pod(
    { containers: [{ name: 'web', image: 'nginx:1.25' }] },
    { annotations: { 'container.apparmor.security.beta.kubernetes.io/web': profile } },
  );

describe('the three verdicts Kyverno disagreed with (issue 21)', () => {
  it('a conditional anchor that does not hold in a nested map skips the rule (NodePort Service)', () => {
    expect(verdicts(loadBalancerPolicy, service('NodePort'))).toEqual([]);
    expect(verdicts(loadBalancerPolicy, service('LoadBalancer'))).toEqual(['violates']);
    expect(
      verdicts(
        loadBalancerPolicy,
        service('LoadBalancer', { 'service.beta.kubernetes.io/aws-load-balancer-ssl-cert': 'arn:cert' }),
      ),
    ).toEqual(['passes']);
  });

  it('celPreconditions decide whether a CEL rule applies (batch/v1 CronJobs are not deprecated)', () => {
    expect(verdicts(deprecatedApis, cronJob('batch/v1'))).toEqual([]);
    const [entry] = check(deprecatedApis, cronJob('batch/v1beta1'));
    expect(entry.verdict).toBe('violates');
    expect(entry.evidence[0].message).toBe('batch/v1beta1/CronJob is deprecated');
  });

  it('a wildcard annotation key stands for the annotations it matches (AppArmor profiles)', () => {
    expect(verdicts(appArmor, appArmorPod('unconfined'))).toEqual(['violates']);
    expect(verdicts(appArmor, appArmorPod('localhost/custom'))).toEqual(['passes']);
    expect(verdicts(appArmor, pod({ containers: [{ name: 'web', image: 'nginx:1.25' }] }))).toEqual([
      'passes',
    ]);
  });

  const real = {
    loadBalancer: corpusPolicy('aws/require-encryption-aws-loadbalancers.yaml'),
    deprecated: corpusPolicy('best-practices-cel/check-deprecated-apis.yaml'),
    appArmor: corpusPolicy('pod-security/baseline/restrict-apparmor-profiles.yaml'),
  };
  const withCorpus = real.loadBalancer && real.deprecated && real.appArmor ? it : it.skip;
  withCorpus('the same three on the real policy files of the shared corpus', () => {
    expect(verdicts(real.loadBalancer!, service('NodePort'))).toEqual([]);
    expect(check(real.deprecated!, cronJob('batch/v1'))).toEqual([]);
    expect(verdicts(real.appArmor!, appArmorPod('unconfined'))).toEqual(['violates']);
  });
});

describe('Kyverno preconditions (JMESPath)', () => {
  const operationOnly = clusterPolicy('probes', [
    podRule({
      preconditions: {
        all: [{ key: "{{ request.operation || 'BACKGROUND' }}", operator: 'NotEquals', value: 'DELETE' }],
      },
      validate: {
        message: 'probes are required',
        pattern: { spec: { containers: [{ livenessProbe: {} }] } },
      },
    }),
  ]);

  it('decides rules whose preconditions only test the operation', () => {
    expect(verdicts(operationOnly, pod({ containers: [{ name: 'web', image: 'nginx:1.25' }] }))).toEqual([
      'violates',
    ]);
    const createOnly = clusterPolicy('create-only', [
      podRule({
        preconditions: { any: [{ key: '{{ request.operation }}', operator: 'AnyIn', value: ['UPDATE'] }] },
        validate: { pattern: { spec: { containers: [{ livenessProbe: {} }] } } },
      }),
    ]);
    expect(check(createOnly, pod({ containers: [{ name: 'web' }] }))).toEqual([]);
  });

  it('reads the object, the namespace and rule variables, with Kyverno functions', () => {
    const policy = clusterPolicy('labels', [
      podRule({
        context: [
          { name: 'team', variable: { jmesPath: 'request.object.metadata.labels.team', default: 'none' } },
        ],
        preconditions: {
          all: [
            { key: '{{ request.namespace }}', operator: 'Equals', value: 'team' },
            { key: '{{ to_upper(team) }}', operator: 'NotEquals', value: 'PLATFORM' },
            {
              key: "{{ regex_match('^nginx', request.object.spec.containers[0].image) }}",
              operator: 'Equals',
              value: true,
            },
          ],
        },
        validate: { pattern: { metadata: { labels: { owner: '?*' } } } },
      }),
    ]);
    expect(verdicts(policy, pod({ containers: [{ name: 'web', image: 'nginx:1.25' }] }))).toEqual([
      'violates',
    ]);
    expect(verdicts(policy, pod({ containers: [{ name: 'web', image: 'redis:7' }] }))).toEqual([]);
    expect(
      verdicts(
        policy,
        pod({ containers: [{ name: 'web', image: 'nginx:1.25' }] }, { labels: { team: 'platform' } }),
      ),
    ).toEqual([]);
  });
});

describe('Kyverno deny conditions and foreach', () => {
  it('deny conditions with Kyverno operators', () => {
    const policy = clusterPolicy('replicas', [
      podRule({
        validate: {
          message: 'too many containers',
          deny: {
            conditions: {
              any: [
                { key: '{{ length(request.object.spec.containers) }}', operator: 'GreaterThan', value: 2 },
                {
                  key: '{{ request.object.spec.containers[].image }}',
                  operator: 'AnyIn',
                  value: ['*:latest'],
                },
              ],
            },
          },
        },
      }),
    ]);
    expect(verdicts(policy, pod({ containers: [{ name: 'a', image: 'nginx:1.25' }] }))).toEqual(['passes']);
    expect(verdicts(policy, pod({ containers: [{ name: 'a', image: 'nginx:latest' }] }))).toEqual([
      'violates',
    ]);
    const three = [1, 2, 3].map((n) => ({ name: `c${n}`, image: 'nginx:1.25' }));
    expect(verdicts(policy, pod({ containers: three }))[0]).toBe('violates');
  });

  it('foreach with a deny inside, element and elementIndex, and the failing element as evidence', () => {
    const policy = clusterPolicy('no-root-volumes', [
      podRule({
        validate: {
          message: 'container {{ elementIndex }} mounts /',
          foreach: [
            {
              list: 'request.object.spec.containers',
              deny: {
                conditions: {
                  any: [{ key: '{{ element.volumeMounts[].mountPath }}', operator: 'AnyIn', value: ['/'] }],
                },
              },
            },
          ],
        },
      }),
    ]);
    const containers = [
      { name: 'ok', image: 'a', volumeMounts: [{ name: 'v', mountPath: '/data' }] },
      { name: 'bad', image: 'b', volumeMounts: [{ name: 'v', mountPath: '/' }] },
    ];
    const [entry] = check(policy, pod({ containers }));
    expect(entry.verdict).toBe('violates');
    expect(entry.evidence).toEqual([{ path: 'spec.containers[1]', message: 'container 1 mounts /' }]);
    expect(verdicts(policy, pod({ containers: [containers[0]] }))).toEqual(['passes']);
  });

  it('foreach patterns apply to the element in scope, and nested foreach reaches inner lists', () => {
    const policy = clusterPolicy('ports', [
      podRule({
        validate: {
          message: 'no host ports',
          foreach: [
            {
              list: 'request.object.spec.containers',
              foreach: [{ list: 'element.ports', pattern: { '=(hostPort)': 0 } }],
            },
          ],
        },
      }),
    ]);
    expect(verdicts(policy, pod({ containers: [{ name: 'a', ports: [{ containerPort: 80 }] }] }))).toEqual([
      'passes',
    ]);
    const [entry] = check(
      policy,
      pod({ containers: [{ name: 'a', ports: [{ containerPort: 80, hostPort: 80 }] }] }),
    );
    expect(entry.verdict).toBe('violates');
    expect(entry.evidence[0].path).toBe('spec.containers[0].ports[0].hostPort');
    // An empty list gives Kyverno nothing to decide: the rule is not listed.
    expect(verdicts(policy, pod({ containers: [{ name: 'a' }] }))).toEqual([]);
  });

  it('foreach with elementScope false checks the whole resource per element', () => {
    const policy = clusterPolicy('scope', [
      podRule({
        validate: {
          foreach: [
            {
              list: 'request.object.spec.containers',
              elementScope: false,
              pattern: { metadata: { labels: { app: '?*' } } },
            },
          ],
        },
      }),
    ]);
    expect(verdicts(policy, pod({ containers: [{ name: 'a' }] }, { labels: { app: 'x' } }))).toEqual([
      'passes',
    ]);
    expect(verdicts(policy, pod({ containers: [{ name: 'a' }] }))).toEqual(['violates']);
  });
});
