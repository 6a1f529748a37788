import type { KubernetesObject } from '../../../model/kubernetes';
import { indexObjects } from '../../../../test/support/controller-fixtures';
import { buildAdmissionCheck } from '../admission-check';

// Issue 21: podSecurity exclusions as Kyverno applies them, and Kyverno CEL rules with their variables
// and namespaceObject bound (as the ValidatingAdmissionPolicy path binds them).

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

function pod(spec: Record<string, unknown>): KubernetesObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'team' }, spec };
}

function verdicts(policy: KubernetesObject, object: KubernetesObject) {
  const { index } = indexObjects([namespace, policy]);
  return buildAdmissionCheck(index, { object, operation: 'CREATE' })
    .constraints.filter((entry) => entry.sourceKind === 'ClusterPolicy')
    .map((entry) => entry.verdict);
}

describe('podSecurity exclusions and Kyverno CEL bindings', () => {
  it('an exclusion by control and image exempts those containers only', () => {
    const policy = clusterPolicy('psa', [
      podRule({
        validate: {
          podSecurity: {
            level: 'baseline',
            version: 'latest',
            exclude: [{ controlName: 'Capabilities', images: ['ghcr.io/trusted/*'] }],
          },
        },
      }),
    ]);
    const withCapability = (image: string) => ({
      name: 'c',
      image,
      securityContext: { capabilities: { add: ['NET_ADMIN'] } },
    });
    expect(verdicts(policy, pod({ containers: [withCapability('ghcr.io/trusted/agent:1')] }))).toEqual([
      'passes',
    ]);
    expect(verdicts(policy, pod({ containers: [withCapability('docker.io/other:1')] }))).toEqual([
      'violates',
    ]);
  });

  it('an exclusion limited to values exempts the capabilities it lists, not others', () => {
    const policy = clusterPolicy('psa', [
      podRule({
        validate: {
          podSecurity: {
            level: 'baseline',
            version: 'latest',
            exclude: [
              {
                controlName: 'Capabilities',
                images: ['nginx'],
                restrictedField: 'spec.containers[*].securityContext.capabilities.add',
                values: ['foo', 'NET_*'],
              },
            ],
          },
        },
      }),
    ]);
    const adding = (add: string[]) =>
      pod({ containers: [{ name: 'c', image: 'nginx', securityContext: { capabilities: { add } } }] });
    expect(verdicts(policy, adding(['foo']))).toEqual(['passes']);
    expect(verdicts(policy, adding(['NET_ADMIN', 'CHOWN']))).toEqual(['passes']); // CHOWN is allowed
    expect(verdicts(policy, adding(['foo', 'SYS_ADMIN']))).toEqual(['violates']);
    // Values of a control whose reported values Forewarn does not record: unknown, as before.
    const hostPorts = clusterPolicy('ports', [
      podRule({
        validate: {
          podSecurity: {
            level: 'baseline',
            exclude: [{ controlName: 'Host Ports', images: ['a'], values: ['80'] }],
          },
        },
      }),
    ]);
    expect(
      verdicts(
        hostPorts,
        pod({ containers: [{ name: 'c', image: 'a', ports: [{ containerPort: 80, hostPort: 80 }] }] }),
      ),
    ).toEqual(['unknown']);
  });

  it('an exclusion by control alone exempts the pod-level fields of that control', () => {
    const policy = clusterPolicy('psa', [
      podRule({
        validate: { podSecurity: { level: 'baseline', exclude: [{ controlName: 'Host Namespaces' }] } },
      }),
    ]);
    expect(verdicts(policy, pod({ hostNetwork: true, containers: [{ name: 'c', image: 'a' }] }))).toEqual([
      'passes',
    ]);
    expect(
      verdicts(
        policy,
        pod({
          hostNetwork: true,
          containers: [{ name: 'c', image: 'a', securityContext: { privileged: true } }],
        }),
      ),
    ).toEqual(['violates']);
  });

  it('binds CEL variables and namespaceObject', () => {
    const policy = clusterPolicy('cel', [
      podRule({
        validate: {
          cel: {
            variables: [{ name: 'images', expression: 'object.spec.containers.map(c, c.image)' }],
            expressions: [
              {
                expression:
                  "namespaceObject.metadata.labels.tier != 'web' || variables.images.all(i, i.startsWith('registry.example.com/'))",
                message: 'web namespaces pull from registry.example.com',
              },
            ],
          },
        },
      }),
    ]);
    expect(verdicts(policy, pod({ containers: [{ name: 'a', image: 'docker.io/nginx' }] }))).toEqual([
      'violates',
    ]);
    expect(
      verdicts(policy, pod({ containers: [{ name: 'a', image: 'registry.example.com/nginx' }] })),
    ).toEqual(['passes']);
  });
});

describe('policies.kyverno.io ValidatingPolicy', () => {
  const policy: KubernetesObject = {
    apiVersion: 'policies.kyverno.io/v1alpha1',
    kind: 'ValidatingPolicy',
    metadata: { name: 'disallow-container-sock-mounts' },
    spec: {
      validationActions: ['Deny'],
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['pods'] },
        ],
      },
      variables: [
        { name: 'hasVolumes', expression: '!has(object.spec.volumes)' },
        { name: 'volumes', expression: 'object.spec.volumes' },
      ],
      validations: [
        {
          expression:
            "variables.hasVolumes || variables.volumes.all(v, !has(v.hostPath) || !v.hostPath.path.matches('/var/run/docker.sock'))",
          message: 'Use of the Docker Unix socket is not allowed.',
        },
      ],
    },
  };
  const socket = { volumes: [{ name: 'sock', hostPath: { path: '/var/run/docker.sock' } }] };
  const containers = [{ name: 'c', image: 'a' }];

  function entries(object: KubernetesObject) {
    const { index } = indexObjects([namespace, policy]);
    return buildAdmissionCheck(index, { object, operation: 'CREATE' }).constraints.filter(
      (entry) => entry.sourceKind === 'ValidatingPolicy',
    );
  }

  it('evaluates its variables and validations on a Pod', () => {
    expect(entries(pod({ containers })).map((entry) => entry.verdict)).toEqual(['passes']);
    const [entry] = entries(pod({ containers, ...socket }));
    expect(entry.verdict).toBe('violates');
    expect(entry.evidence[0].message).toBe('Use of the Docker Unix socket is not allowed.');
  });

  it('is listed for pod controllers and checks their pod template, as Kyverno auto-generates it', () => {
    const deployment: KubernetesObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'team' },
      spec: { template: { metadata: { labels: { app: 'web' } }, spec: { containers, ...socket } } },
    };
    const [entry] = entries(deployment);
    expect(entry.verdict).toBe('violates');
    expect(entry.evidence[0].path).toBe('spec.template');
  });

  it('reads object.metadata.namespace on the controller itself through auto-generation, labels on its template', () => {
    const byNamespace: KubernetesObject = {
      ...policy,
      metadata: { name: 'team-pods-labelled' },
      spec: {
        ...(policy.spec as Record<string, unknown>),
        variables: [],
        matchConditions: [{ name: 'in-team', expression: "object.metadata.namespace == 'team'" }],
        validations: [{ expression: 'has(object.metadata.labels.app)', message: 'pods need an app label' }],
      },
    };
    const { index } = indexObjects([namespace, byNamespace]);
    const verdictOf = (templateLabels: Record<string, string>) =>
      buildAdmissionCheck(index, {
        object: {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'web', namespace: 'team', labels: { app: 'web' } },
          spec: { template: { metadata: { labels: templateLabels }, spec: { containers } } },
        },
        operation: 'CREATE',
      }).constraints.find((entry) => entry.sourceKind === 'ValidatingPolicy')?.verdict;
    // The template has no namespace: were it rewritten, the match condition would drop the policy.
    expect(verdictOf({ app: 'web' })).toBe('passes');
    expect(verdictOf({ tier: 'web' })).toBe('violates');
  });

  it('is not listed for a controller at a version Kyverno does not generate for (batch/v1beta1 CronJob)', () => {
    // Kyverno 1.19 generates the policy for batch/v1 CronJobs only (pkg/cel/autogen/data.go).
    const cronJob = (apiVersion: string): KubernetesObject => ({
      apiVersion,
      kind: 'CronJob',
      metadata: { name: 'old', namespace: 'team' },
      spec: { schedule: '0 3 * * *', jobTemplate: { spec: { template: { spec: { containers } } } } },
    });
    expect(entries(cronJob('batch/v1')).map((entry) => entry.verdict)).toEqual(['passes']);
    expect(entries(cronJob('batch/v1beta1'))).toEqual([]);
  });
});
