import type { KubernetesObject } from '../../services/model/kubernetes';

// A ValidatingAdmissionPolicy whose params are a custom kind (ReplicaLimit, the Kubernetes
// documentation's example), its CRD, param objects and bindings: shared by the unit tests on
// manifests, the test-API-server test and the e2e test on the real API server.

export const PARAM_GROUP = 'rules.example.com';
export const PARAM_API_VERSION = `${PARAM_GROUP}/v1`;
export const PARAM_KIND_FLAG_VALUE = `${PARAM_GROUP}/v1/replicalimits`;
export const POLICY_NAME = 'replica-limit.example.com';

export function replicaLimitCrd(scope: 'Namespaced' | 'Cluster' = 'Namespaced'): KubernetesObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `replicalimits.${PARAM_GROUP}` },
    spec: {
      group: PARAM_GROUP,
      scope,
      names: {
        kind: 'ReplicaLimit',
        plural: 'replicalimits',
        singular: 'replicalimit',
        listKind: 'ReplicaLimitList',
      },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { maxReplicas: { type: 'integer' } },
            },
          },
        },
      ],
    },
  };
}

export function replicaLimit(
  name: string,
  maxReplicas: number,
  namespace: string | undefined,
  labels: Record<string, string> = {},
): KubernetesObject {
  return {
    apiVersion: PARAM_API_VERSION,
    kind: 'ReplicaLimit',
    metadata: { name, ...(namespace === undefined ? {} : { namespace }), labels },
    maxReplicas,
  };
}

export function replicaLimitPolicy(failurePolicy: 'Fail' | 'Ignore' = 'Fail'): KubernetesObject {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: POLICY_NAME },
    spec: {
      failurePolicy,
      paramKind: { apiVersion: PARAM_API_VERSION, kind: 'ReplicaLimit' },
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
          expression: 'object.spec.replicas <= params.maxReplicas',
          messageExpression: "'at most ' + string(params.maxReplicas) + ' replicas'",
        },
      ],
    },
  };
}

export function replicaLimitBinding(
  paramRef: Record<string, unknown>,
  name = `${POLICY_NAME}-binding`,
): KubernetesObject {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: { policyName: POLICY_NAME, validationActions: ['Deny'], paramRef },
  };
}

export function deploymentWithReplicas(replicas: number, namespace: string): KubernetesObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image: 'registry.example/web:1' }] },
      },
    },
  };
}
