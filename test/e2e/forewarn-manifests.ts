// Manifests of the Forewarn end-to-end test (the CRDs the adapters watch are in forewarn-crds.ts): a
// constrained namespace `shop` with one policy of every kind, an unconstrained namespace
// `clean`, the webhook's namespace and its ValidatingWebhookConfiguration (spec 4.4 scope).

export const constrainedNamespace = 'shop';
export const cleanNamespace = 'clean';
export const webhookNamespace = 'forewarn-system';
/** The controller's default --own-webhook, so the webhookconfig adapter does not index our own. */
export const webhookConfigurationName = 'forewarn-webhook';
export const webhookEntryName = 'validate.forewarn.dev';
export const webhookSecretName = `${webhookConfigurationName}-tls`;

/** The API server sets this label on every namespace (1.21+); the manifests spell it out anyway. */
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';
export const tierLabel = 'forewarn.dev/tier';

export const namespacesManifest = `
apiVersion: v1
kind: Namespace
metadata:
  name: ${constrainedNamespace}
  labels:
    ${NAMESPACE_NAME_LABEL}: ${constrainedNamespace}
    ${tierLabel}: constrained
    env: prod
---
apiVersion: v1
kind: Namespace
metadata:
  name: ${cleanNamespace}
  labels:
    ${NAMESPACE_NAME_LABEL}: ${cleanNamespace}
    ${tierLabel}: unconstrained
---
apiVersion: v1
kind: Namespace
metadata:
  name: ${webhookNamespace}
  labels:
    ${NAMESPACE_NAME_LABEL}: ${webhookNamespace}
`;

export const defaultDenyPolicyName = 'default-deny-ingress';
/** Selects app=api only: a Deployment labelled app=web must not be warned about it. */
export const apiOnlyPolicyName = 'api-allow-frontend';
export const quotaName = 'compute';
export const gatekeeperConstraintName = 'shop-must-have-owner';
export const kyvernoClusterPolicyName = 'require-team-label';
export const kyvernoPolicyName = 'audit-probes';
export const istioDenyPolicyName = 'deny-external-admin';

export const networkPoliciesManifest = `
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: ${defaultDenyPolicyName}
  namespace: ${constrainedNamespace}
spec:
  podSelector: {}
  policyTypes: [Ingress]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: ${apiOnlyPolicyName}
  namespace: ${constrainedNamespace}
spec:
  podSelector:
    matchLabels:
      app: api
  policyTypes: [Ingress]
  ingress:
    - from:
        - podSelector:
            matchLabels:
              app: frontend
      ports:
        - protocol: TCP
          port: 8080
`;

export const resourceQuotaManifest = `
apiVersion: v1
kind: ResourceQuota
metadata:
  name: ${quotaName}
  namespace: ${constrainedNamespace}
spec:
  hard:
    limits.memory: 4Gi
    requests.cpu: "2"
`;

/** 3810Mi of 4Gi is 93.0 %: Critical (>= 90 %). The Pod below uses exactly this. */
export const quotaStatusUsed = { 'limits.memory': '3810Mi', 'requests.cpu': '500m' };

/**
 * A Pod (never scheduled: no scheduler or kubelet runs) whose limits and requests the quota controller
 * counts. The test's Deployments request no CPU, so the quota admission rejects their Pods and the
 * usage stays at this Pod's.
 */
export const quotaUserPodManifest = `
apiVersion: v1
kind: Pod
metadata:
  name: quota-user
  namespace: ${constrainedNamespace}
  labels:
    app: batch
spec:
  containers:
    - name: main
      image: registry.example.com/batch:1.0
      resources:
        requests:
          cpu: ${quotaStatusUsed['requests.cpu']}
        limits:
          memory: ${quotaStatusUsed['limits.memory']}
`;

export const policyEngineManifest = `
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sRequiredLabels
metadata:
  name: ${gatekeeperConstraintName}
spec:
  match:
    kinds:
      - apiGroups: [apps]
        kinds: [Deployment]
    namespaceSelector:
      matchLabels:
        ${tierLabel}: constrained
  parameters:
    labels:
      - key: owner
---
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: ${kyvernoClusterPolicyName}
spec:
  validationFailureAction: Enforce
  rules:
    - name: team-label
      match:
        any:
          - resources:
              kinds: [Deployment]
              namespaceSelector:
                matchLabels:
                  ${tierLabel}: constrained
      validate:
        message: 'label team is required'
        pattern:
          metadata:
            labels:
              team: '?*'
---
apiVersion: kyverno.io/v1
kind: Policy
metadata:
  name: ${kyvernoPolicyName}
  namespace: ${constrainedNamespace}
spec:
  validationFailureAction: Audit
  rules:
    - name: readiness-probe
      match:
        any:
          - resources:
              kinds: [Deployment]
      validate:
        message: 'containers need a readiness probe'
        pattern:
          spec:
            template:
              spec:
                containers:
                  - readinessProbe:
                      periodSeconds: '>0'
`;

export const meshAndCniManifest = `
apiVersion: security.istio.io/v1beta1
kind: AuthorizationPolicy
metadata:
  name: ${istioDenyPolicyName}
  namespace: ${constrainedNamespace}
spec:
  selector:
    matchLabels:
      app: web
  action: DENY
  rules:
    - from:
        - source:
            notNamespaces: [${constrainedNamespace}]
      to:
        - operation:
            paths: ['/admin/*']
---
apiVersion: security.istio.io/v1beta1
kind: PeerAuthentication
metadata:
  name: strict-mtls
  namespace: ${constrainedNamespace}
spec:
  mtls:
    mode: STRICT
---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata:
  name: api-dns-only
  namespace: ${constrainedNamespace}
spec:
  endpointSelector:
    matchLabels:
      app: api
  egress:
    - toPorts:
        - ports:
            - port: "53"
              protocol: UDP
---
apiVersion: cilium.io/v2
kind: CiliumClusterwideNetworkPolicy
metadata:
  name: shop-egress-lockdown
spec:
  endpointSelector:
    matchLabels:
      io.kubernetes.pod.namespace: ${constrainedNamespace}
  egressDeny:
    - toCIDR: [169.254.169.254/32]
`;

export function deploymentManifest(namespace: string, name: string, appLabel: string): string {
  return `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  replicas: 1
  selector:
    matchLabels:
      app: ${appLabel}
  template:
    metadata:
      labels:
        app: ${appLabel}
    spec:
      containers:
        - name: main
          image: registry.example.com/${appLabel}:1.0
          resources:
            limits:
              memory: 256Mi
`;
}

export function networkPolicyManifest(name: string, namespace: string, allowFromFrontend: boolean): string {
  const ingress = allowFromFrontend
    ? `
  ingress:
    - from:
        - podSelector:
            matchLabels:
              app: frontend`
    : '';
  return `
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  podSelector:
    matchLabels:
      app: ${name}
  policyTypes: [Ingress]${ingress}
`;
}

/** Spec 4.4: CREATE/UPDATE of namespaced workloads, system namespaces and our own skipped. */
export function webhookConfigurationManifest(webhookPort: number): string {
  return `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: ${webhookConfigurationName}
webhooks:
  - name: ${webhookEntryName}
    clientConfig:
      url: https://127.0.0.1:${webhookPort}/validate
    failurePolicy: Ignore
    sideEffects: None
    admissionReviewVersions: [v1]
    timeoutSeconds: 5
    namespaceSelector:
      matchExpressions:
        - key: ${NAMESPACE_NAME_LABEL}
          operator: NotIn
          values: [kube-system, kube-public, kube-node-lease, ${webhookNamespace}]
    rules:
      - apiGroups: [""]
        apiVersions: [v1]
        operations: [CREATE, UPDATE]
        resources: [pods, services, configmaps]
        scope: Namespaced
      - apiGroups: [apps]
        apiVersions: [v1]
        operations: [CREATE, UPDATE]
        resources: [deployments, statefulsets, daemonsets, replicasets]
        scope: Namespaced
      - apiGroups: [batch]
        apiVersions: [v1, v1beta1]
        operations: [CREATE, UPDATE]
        resources: [jobs, cronjobs]
        scope: Namespaced
`;
}
