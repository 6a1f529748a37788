import { existsSync, readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { KubernetesObject } from '../../model/kubernetes';
import { indexObjects } from '../../../test/support/controller-fixtures';
import { buildAdmissionCheck } from './admission-check';

// ValidatingAdmissionPolicy verdicts on the Kubernetes documentation's own policies (read by path
// from the real-world corpus when it is there), with the objects the documentation uses.

const WEBSITE = '/work/shared/realworld/policies/k8s-website/access';
const withCorpus = existsSync(WEBSITE) ? describe : describe.skip;

function documents(file: string): KubernetesObject[] {
  return parseAllDocuments(readFileSync(`${WEBSITE}/${file}`, 'utf8'))
    .map((document) => document.toJSON() as KubernetesObject)
    .filter((object) => object !== null)
    .map((object) => ({ ...object, apiVersion: 'admissionregistration.k8s.io/v1' }));
}

function binding(
  policyName: string,
  actions: string[] = ['Deny'],
  extra: Record<string, unknown> = {},
): KubernetesObject {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: `${policyName}-binding` },
    spec: { policyName, validationActions: actions, ...extra },
  };
}

const namespace = (labels: Record<string, string> = {}): KubernetesObject => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: 'team', labels },
});

function deployment(
  replicas: number,
  containers: Array<Record<string, unknown>>,
  labels: Record<string, string> = {},
): KubernetesObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'team', labels },
    spec: { replicas, template: { metadata: { labels: { app: 'web' } }, spec: { containers } } },
  };
}

function pod(containers: Array<Record<string, unknown>>): KubernetesObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'team' }, spec: { containers } };
}

function checkAgainst(
  policies: KubernetesObject[],
  object: KubernetesObject,
  labels: Record<string, string> = {},
) {
  const { index } = indexObjects([namespace(labels), ...policies]);
  return buildAdmissionCheck(index, { object, operation: 'CREATE' }).constraints.filter(
    (entry) => entry.sourceKind === 'ValidatingAdmissionPolicyBinding',
  );
}

const minReplicas: KubernetesObject[] = [
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'enforce-multiple-replicas-deployments' },
    spec: {
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: ['apps'],
            apiVersions: ['v1'],
            resources: ['deployments'],
            operations: ['CREATE', 'UPDATE'],
          },
        ],
      },
      validations: [{ expression: 'object.spec.replicas >= 2' }],
    },
  },
  binding('enforce-multiple-replicas-deployments'),
];

describe('ValidatingAdmissionPolicy verdicts', () => {
  it('fails a Deployment with one replica with the documented default message, passes two', () => {
    const [violated] = checkAgainst(minReplicas, deployment(1, [{ name: 'web', image: 'web' }]));
    expect(violated).toMatchObject({ verdict: 'violates', severity: 'Critical' });
    expect(violated.evidence).toEqual([
      { path: 'spec.replicas', message: 'failed expression: object.spec.replicas >= 2' },
    ]);
    expect(violated.summary).toBe(
      'will be rejected: failed expression: object.spec.replicas >= 2 (ValidatingAdmissionPolicy "enforce-multiple-replicas-deployments")',
    );
    expect(checkAgainst(minReplicas, deployment(2, [{ name: 'web', image: 'web' }]))[0].verdict).toBe(
      'passes',
    );
  });

  it('warns instead of rejecting under a Warn binding', () => {
    const warned = [minReplicas[0], binding('enforce-multiple-replicas-deployments', ['Warn'])];
    const [entry] = checkAgainst(warned, deployment(1, [{ name: 'web' }]));
    expect(entry).toMatchObject({ verdict: 'violates', severity: 'Warning' });
    expect(entry.summary).toMatch(/^will get a warning: failed expression/);
  });

  it('names each failing container of an all over containers, and fails closed on evaluation errors', () => {
    const policy: KubernetesObject = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'require-limits' },
      spec: {
        matchConstraints: {
          resourceRules: [
            { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] },
          ],
        },
        validations: [
          {
            expression: 'object.spec.template.spec.containers.all(c, has(c.securityContext.runAsNonRoot))',
            message: 'every container must set runAsNonRoot',
          },
        ],
      },
    };
    const containers = [
      { name: 'web', securityContext: { runAsNonRoot: true } },
      { name: 'sidecar', securityContext: {} },
      // No security context: an evaluation error (the server defaults none, unlike `resources: {}`).
      { name: 'init' },
    ];
    const [entry] = checkAgainst([policy, binding('require-limits')], deployment(1, containers));
    expect(entry.evidence).toEqual([
      {
        path: 'spec.template.spec.containers[1]',
        message: 'container "sidecar": every container must set runAsNonRoot',
      },
      {
        path: 'spec.template.spec.containers[2]',
        message:
          'container "init": a validation cannot be evaluated on it (field not found: securityContext) and the policy fails closed',
      },
    ]);
    expect(entry.summary).toBe(
      'will be rejected: container "sidecar": every container must set runAsNonRoot (and 1 more) (ValidatingAdmissionPolicy "require-limits")',
    );
  });

  it('does not list a policy whose matchConditions exclude the object', () => {
    const policy: KubernetesObject = {
      ...minReplicas[0],
      spec: {
        ...(minReplicas[0].spec as object),
        matchConditions: [{ name: 'not-exempt', expression: "!('exempt' in object.metadata.labels)" }],
      },
    };
    const objects = [policy, minReplicas[1]];
    expect(checkAgainst(objects, deployment(1, [{ name: 'web' }], { exempt: 'yes' }))).toEqual([]);
    expect(checkAgainst(objects, deployment(1, [{ name: 'web' }]))[0].verdict).toBe('violates');
  });

  it('names the failing elements and fields of validations written over variables', () => {
    const policy: KubernetesObject = {
      ...minReplicas[0],
      spec: {
        ...(minReplicas[0].spec as object),
        variables: [
          { name: 'containers', expression: 'object.spec.template.spec.containers' },
          { name: 'first', expression: 'variables.containers[0]' },
          { name: 'replicas', expression: 'object.spec.replicas' },
        ],
        validations: [
          {
            expression: 'variables.containers.all(c, has(c.securityContext))',
            message: 'set a security context',
          },
          { expression: 'variables.replicas >= 2', message: 'two replicas' },
        ],
      },
    };
    const [entry] = checkAgainst(
      [policy, minReplicas[1]],
      deployment(1, [{ name: 'web', securityContext: {} }, { name: 'sidecar' }]),
    );
    expect(entry.verdict).toBe('violates');
    expect(entry.evidence).toEqual([
      { path: 'spec.template.spec.containers[1]', message: 'container "sidecar": set a security context' },
      { path: 'spec.replicas', message: 'two replicas' },
    ]);
  });
});

withCorpus('ValidatingAdmissionPolicy verdicts on the Kubernetes documentation policies', () => {
  it('names the failing element of an exists over containers by the policy message', () => {
    const privileged = documents('manifest-admission-control/deny-privileged-policy.yaml');
    const [entry] = checkAgainst(
      privileged,
      pod([{ name: 'app' }, { name: 'debug', securityContext: { privileged: true } }]),
    );
    expect(entry.verdict).toBe('violates');
    expect(entry.evidence).toEqual([
      { path: 'spec.containers', message: 'Privileged containers are not allowed' },
    ]);
    expect(
      checkAgainst(privileged, pod([{ name: 'app', securityContext: { privileged: false } }]))[0].verdict,
    ).toBe('passes');
  });

  it('evaluates variables and messageExpression with the namespace object', () => {
    const policy = [
      ...documents('image-matches-namespace-environment.policy.yaml'),
      binding('image-matches-namespace-environment.policy.example.com'),
    ];
    const staging = { environment: 'staging' };
    const [entry] = checkAgainst(
      policy,
      deployment(1, [{ name: 'web', image: 'prod.example.com/web:1' }]),
      staging,
    );
    expect(entry.verdict).toBe('violates');
    expect(entry.evidence[0].message).toBe('only staging images are allowed in namespace team');
    expect(
      checkAgainst(policy, deployment(1, [{ name: 'web', image: 'staging.example.com/web:1' }]), staging)[0]
        .verdict,
    ).toBe('passes');
    const exempt = deployment(1, [{ name: 'web', image: 'prod.example.com/web:1' }], { exempt: 'true' });
    expect(checkAgainst(policy, exempt, staging)[0].verdict).toBe('passes');
  });

  it('is unknown when its params are not in the index, or when it asks who the requester is', () => {
    const replicas = documents('deployment-replicas-policy.yaml');
    // The page's paramKind is the alpha shape (group, version); v1 names it by apiVersion.
    const policy = {
      ...replicas[0],
      spec: {
        ...(replicas[0].spec as object),
        paramKind: { apiVersion: 'rules.example.com/v1', kind: 'ReplicaLimit' },
      },
    };
    const withParams = [
      policy,
      binding('deploy-replica-policy.example.com', ['Deny'], {
        paramRef: { name: 'limit', namespace: 'team' },
      }),
    ];
    const [entry] = checkAgainst(withParams, deployment(9, [{ name: 'web' }]));
    expect(entry).toMatchObject({
      verdict: 'unknown',
      reason:
        'its params are ReplicaLimit objects (rules.example.com/v1), which the controller does not read: add their group/version/plural to --param-kinds',
    });
    const userPolicy: KubernetesObject = {
      ...minReplicas[0],
      spec: {
        ...(minReplicas[0].spec as object),
        validations: [{ expression: "request.userInfo.username == 'admin'" }],
      },
    };
    expect(checkAgainst([userPolicy, minReplicas[1]], deployment(1, []))[0].verdict).toBe('unknown');
  });
});
