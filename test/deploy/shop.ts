// The constrained namespace of the deploy tier: a default-deny NetworkPolicy Forewarn warns about.
export const SHOP_MANIFEST = `
apiVersion: v1
kind: Namespace
metadata: { name: shop, labels: { forewarn.dev/tier: constrained } }
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: { name: default-deny-ingress, namespace: shop }
spec: { podSelector: {}, policyTypes: [Ingress] }
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
