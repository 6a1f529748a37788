// The constrained namespace of the deploy tier: a default-deny NetworkPolicy (it only applies: no
// warning, issue 31) and an audited owner-label rule Forewarn warns about on every apply that lacks it.

/** Audited, never enforced: the API server admits every Deployment; Forewarn warns. */
export const OWNER_LABEL_POLICY = 'forewarn-deploy-owner-label';
export const OWNER_LABEL_MESSAGE = 'deployments in shop need an owner label';

export const SHOP_MANIFEST = `
apiVersion: v1
kind: Namespace
metadata: { name: shop, labels: { forewarn.dev/tier: constrained } }
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: { name: default-deny-ingress, namespace: shop }
spec: { podSelector: {}, policyTypes: [Ingress] }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: ${OWNER_LABEL_POLICY} }
spec:
  failurePolicy: Ignore
  matchConstraints:
    resourceRules:
      - { apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments] }
  validations:
    - expression: "has(object.metadata.labels) && 'owner' in object.metadata.labels"
      message: ${OWNER_LABEL_MESSAGE}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: ${OWNER_LABEL_POLICY} }
spec:
  policyName: ${OWNER_LABEL_POLICY}
  validationActions: [Audit]
  matchResources:
    namespaceSelector: { matchLabels: { forewarn.dev/tier: constrained } }
`;

/** A Deployment in shop; a new name each time, so every apply is a CREATE the webhook sees. */
export function deploymentManifest(name: string): string {
  return `
apiVersion: apps/v1
kind: Deployment
metadata: { name: ${name}, namespace: shop, labels: { app: ${name} } }
spec:
  replicas: 1
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec: { containers: [{ name: web, image: nginx:1.27 }] }
`;
}
