import type { KubernetesObject } from '../../model/kubernetes';
import { indexObjects } from '../../../test/support/controller-fixtures';
import { evaluateWorkload, keepWorkload, rolloutVerdicts } from './workload-risk';
import { rolloutPodOf, rolloutRequest } from './rollout-objects';

// A workload's next rollout as admission sees it (issue 35; the disagreements the fidelity tier
// found with the API server and gator): a controller's update and then the Pods it creates, judged
// by the policies written for Pods alone; a bare Pod's or Job's re-creation, a CREATE.

const ADMISSION = 'admissionregistration.k8s.io/v1';

/** A policy on Pods alone (as the Kubernetes documentation's examples are), with a Deny binding. */
function podPolicy(name: string, operations: string[], expression: string): KubernetesObject[] {
  return [
    {
      apiVersion: ADMISSION,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations, resources: ['pods'] }],
        },
        validations: [{ expression, message: `${name} failed` }],
      },
    },
    {
      apiVersion: ADMISSION,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: `${name}-binding` },
      spec: { policyName: name, validationActions: ['Deny'] },
    },
  ];
}

const NOT_PRIVILEGED =
  '!object.spec.containers.exists(c, has(c.securityContext) && has(c.securityContext.privileged) && c.securityContext.privileged)';
const NAMED = "has(object.metadata.labels) && 'app.kubernetes.io/name' in object.metadata.labels";

const container = (privileged: boolean) => ({
  name: 'agent',
  image: 'registry.example.com/agent:1.0',
  ...(privileged ? { securityContext: { privileged: true } } : {}),
});

function deployment(name: string, privileged: boolean): KubernetesObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'shop', labels: { 'app.kubernetes.io/name': name } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name, 'app.kubernetes.io/name': name } },
        spec: { containers: [container(privileged)] },
      },
    },
  };
}

const pod = (name: string, labels: Record<string, string>): KubernetesObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'shop', labels },
  spec: { containers: [container(false)] },
});

const namespace: KubernetesObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } };

describe('a workload judged as its rollout', () => {
  it('puts a controller at risk when the Pods it creates fail a policy on Pods alone, evidence in its template', () => {
    const { index } = indexObjects([
      namespace,
      ...podPolicy('deny-privileged', ['CREATE', 'UPDATE'], NOT_PRIVILEGED),
    ]);
    const risk = evaluateWorkload(index, keepWorkload(deployment('agent', true)));
    expect(risk.findings.map((finding) => [finding.constraint.name, finding.outcome])).toEqual([
      ['deny-privileged-binding', 'rejected'],
    ]);
    const [finding] = risk.findings;
    expect(finding?.verdict.rejects).toBe('pods');
    expect(
      finding?.verdict.evidence.every((item) => item.path.startsWith('spec.template.spec.containers')),
    ).toBe(true);
    expect(evaluateWorkload(index, keepWorkload(deployment('web', false))).findings).toEqual([]);
  });

  it('judges a bare Pod as its re-creation: a policy on CREATE alone applies', () => {
    const { index } = indexObjects([namespace, ...podPolicy('require-name', ['CREATE'], NAMED)]);
    expect(rolloutRequest(pod('debug', {})).operation).toBe('CREATE');
    const unnamed = evaluateWorkload(index, keepWorkload(pod('debug', {})));
    expect(unnamed.findings.map((finding) => finding.outcome)).toEqual(['rejected']);
    const named = evaluateWorkload(index, keepWorkload(pod('page', { 'app.kubernetes.io/name': 'page' })));
    expect(named.findings).toEqual([]);
  });

  it('judges a controller once per constraint: its own verdict stands for a constraint that meets both', () => {
    const { index } = indexObjects([
      {
        ...namespace,
        metadata: { name: 'shop', labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } },
      },
      ...podPolicy('deny-privileged', ['CREATE', 'UPDATE'], NOT_PRIVILEGED),
    ]);
    const verdicts = rolloutVerdicts(index, keepWorkload(deployment('agent', true)));
    const ids = verdicts.map(({ constraint }) => constraint.id);
    expect(new Set(ids).size).toBe(ids.length);
    // Pod Security judges the template itself (the controller's verdict); the Pod policy through the Pod.
    expect(verdicts.map(({ verdict }) => verdict.verdict)).toEqual(['violates', 'violates']);
  });

  it('builds the rollout Pod from the template, in the namespace, owned as a controller would own it', () => {
    const built = rolloutPodOf(deployment('agent', false));
    expect(built).toMatchObject({
      kind: 'Pod',
      metadata: {
        namespace: 'shop',
        labels: { app: 'agent' },
        ownerReferences: [{ kind: 'ReplicaSet', name: 'agent', controller: true }],
      },
      spec: { containers: [{ name: 'agent' }] },
    });
    expect(rolloutPodOf(pod('debug', {}))).toBeUndefined();
    expect(rolloutRequest(deployment('agent', false))).toMatchObject({ operation: 'UPDATE', rollout: true });
  });
});
