// Manifests of the e2e smoke test (smoke.test.ts): a labelled namespace with a NetworkPolicy, a
// ResourceQuota and a Pod that uses it, a Warn-only ValidatingAdmissionPolicy, a structural CRD and one
// of its objects, and a fail-open webhook registration pointing at nothing.
import { ciliumNetworkPolicyCrd, crdManifest } from './forewarn-crds';

export const namespace = 'forewarn-smoke';
export const namespaceLabel = 'forewarn.dev/e2e-smoke';
export const webhookName = 'fail-open.forewarn-smoke.e2e';

export const namespaceManifest = `
apiVersion: v1
kind: Namespace
metadata:
  name: ${namespace}
  labels:
    ${namespaceLabel}: "true"
    team: platform
    pod-security.kubernetes.io/warn: restricted
`;

export const networkPolicyManifest = `
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: default-deny-ingress
  namespace: ${namespace}
spec:
  podSelector: {}
  policyTypes: [Ingress]
`;

export const resourceQuotaManifest = `
apiVersion: v1
kind: ResourceQuota
metadata:
  name: compute
  namespace: ${namespace}
spec:
  hard:
    pods: "10"
    requests.cpu: "2"
    limits.memory: 4Gi
`;

/** Counts toward every resource of the quota; violates the restricted Pod Security Standard. */
export const quotaPodManifest = `
apiVersion: v1
kind: Pod
metadata:
  name: quota-user
  namespace: ${namespace}
spec:
  containers:
    - name: main
      image: registry.example.com/app:1.0
      resources:
        requests:
          cpu: 500m
        limits:
          memory: 1Gi
`;

export const warnOnlyPolicyName = 'smoke-configmaps-need-owner';

/** A ValidatingAdmissionPolicy bound with validationActions [Warn]: kubectl must print its message. */
export const warnOnlyAdmissionPolicyManifest = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: ${warnOnlyPolicyName}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups: [""]
        apiVersions: [v1]
        operations: [CREATE, UPDATE]
        resources: [configmaps]
  validations:
    - expression: "has(object.metadata.labels) && 'owner' in object.metadata.labels"
      message: ConfigMaps need an owner label
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: ${warnOnlyPolicyName}
spec:
  policyName: ${warnOnlyPolicyName}
  validationActions: [Warn]
  matchResources:
    namespaceSelector:
      matchLabels:
        ${namespaceLabel}: "true"
`;

/** The CRD of the Cilium policy the smoke test creates (the forewarn run's minimal schema). */
export const ciliumCrdManifest = crdManifest(ciliumNetworkPolicyCrd);

export const ciliumPolicyManifest = `
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata:
  name: allow-dns-only
  namespace: ${namespace}
spec:
  endpointSelector: {}
  egress:
    - toPorts:
        - ports:
            - port: "53"
              protocol: UDP
`;

export function failOpenWebhookManifest(port: number): string {
  return `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: forewarn-smoke-fail-open
webhooks:
  - name: ${webhookName}
    clientConfig:
      url: https://127.0.0.1:${port}/validate
    failurePolicy: Ignore
    sideEffects: None
    admissionReviewVersions: [v1]
    timeoutSeconds: 5
    namespaceSelector:
      matchLabels:
        ${namespaceLabel}: "true"
    rules:
      - apiGroups: [""]
        apiVersions: [v1]
        operations: [CREATE, UPDATE]
        resources: [configmaps]
`;
}

export function configMapManifest(name: string): string {
  return `
apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  namespace: ${namespace}
data:
  purpose: fail-open check
`;
}
