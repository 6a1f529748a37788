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
