import type { KubernetesObject } from '../../services/model/kubernetes';

// The workloads-at-risk tests' policy (issue 35): a ValidatingAdmissionPolicy on Deployments that
// requires one label, and its binding, as the API server takes them.

const ADMISSION = 'admissionregistration.k8s.io/v1';

export interface RequiredLabelPolicyOptions {
  name: string;
  label: string;
  actions: string[];
  /** The binding's matchResources (which namespaces it reaches); absent: every namespace. */
  matchResources?: Record<string, unknown>;
  bindingUid?: string;
}

/** The policy and its binding, both named `name`. */
export function requiredLabelPolicy(
  options: RequiredLabelPolicyOptions,
): [KubernetesObject, KubernetesObject] {
  const { name, label, actions } = options;
  return [
    {
      apiVersion: ADMISSION,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: ['apps'],
              apiVersions: ['v1'],
              operations: ['CREATE', 'UPDATE'],
              resources: ['deployments'],
            },
          ],
        },
        validations: [
          {
            expression: `has(object.metadata.labels) && '${label}' in object.metadata.labels`,
            message: `set a ${label} label`,
          },
        ],
      },
    },
    {
      apiVersion: ADMISSION,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name, ...(options.bindingUid ? { uid: options.bindingUid } : {}) },
      spec: {
        policyName: name,
        validationActions: actions,
        ...(options.matchResources ? { matchResources: options.matchResources } : {}),
      },
    },
  ];
}

/**
 * A one-container Deployment with the given labels: what the required-label policy judges (its
 * pod template carries only the selector's label, so the policy reads the Deployment's own).
 */
export function labelledDeployment(
  namespace: string,
  name: string,
  labels: Record<string, string> = {},
): KubernetesObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: 'registry.example.com/app:1.0.0' }] },
      },
    },
  };
}

/** A namespaced Kyverno Policy (Audit) asking Deployments of `namespace` for an `owner` label. */
export function ownerLabelKyvernoPolicy(namespace: string): KubernetesObject {
  return {
    apiVersion: 'kyverno.io/v1',
    kind: 'Policy',
    metadata: { name: 'owner-label', namespace },
    spec: {
      validationFailureAction: 'Audit',
      rules: [
        {
          name: 'owner',
          match: { any: [{ resources: { kinds: ['Deployment'] } }] },
          validate: {
            message: 'an owner label is required',
            pattern: { metadata: { labels: { owner: '?*' } } },
          },
        },
      ],
    },
  };
}
