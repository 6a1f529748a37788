// Least-privilege access of both processes. The controller only reads (get/list/watch) the kinds its
// adapters watch, plus namespaces and workloads; never Secrets, never a write verb. The webhook may
// write only its own TLS Secret and patch only its own webhook configuration (self-signed mode).
import * as k8s from '@pulumi/kubernetes';
import { clusterMeta, namespacedMeta, type BuildContext } from './common';

type PolicyRule = k8s.types.input.rbac.v1.PolicyRule;

const READ = ['get', 'list', 'watch'];

/** Read access of the controller, one rule per API group. */
export const CONTROLLER_RULES: PolicyRule[] = [
  {
    apiGroups: [''],
    resources: ['namespaces', 'pods', 'services', 'resourcequotas', 'limitranges'],
    verbs: READ,
  },
  { apiGroups: ['apps'], resources: ['deployments', 'statefulsets', 'daemonsets'], verbs: READ },
  { apiGroups: ['batch'], resources: ['cronjobs'], verbs: READ },
  { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies', 'ingresses'], verbs: READ },
  // Companion kinds the missing-resource rules look for (PodDisruptionBudget, HorizontalPodAutoscaler).
  { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: READ },
  { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'], verbs: READ },
  {
    apiGroups: ['admissionregistration.k8s.io'],
    resources: [
      'validatingwebhookconfigurations',
      'mutatingwebhookconfigurations',
      'validatingadmissionpolicies',
      'validatingadmissionpolicybindings',
    ],
    verbs: READ,
  },
  // CRD discovery: which optional kinds (Cilium, Gatekeeper, Kyverno, Istio, ...) the cluster serves.
  { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: READ },
  {
    apiGroups: ['cilium.io'],
    resources: ['ciliumnetworkpolicies', 'ciliumclusterwidenetworkpolicies'],
    verbs: READ,
  },
  // Gatekeeper creates one kind per ConstraintTemplate, so the group is read whole.
  { apiGroups: ['constraints.gatekeeper.sh'], resources: ['*'], verbs: READ },
  { apiGroups: ['kyverno.io'], resources: ['clusterpolicies', 'policies'], verbs: READ },
  {
    apiGroups: ['security.istio.io'],
    resources: ['authorizationpolicies', 'peerauthentications'],
    verbs: READ,
  },
  { apiGroups: ['networking.istio.io'], resources: ['sidecars'], verbs: READ },
  { apiGroups: ['cert-manager.io'], resources: ['issuers', 'clusterissuers'], verbs: READ },
  { apiGroups: ['monitoring.coreos.com'], resources: ['servicemonitors', 'podmonitors'], verbs: READ },
];

/** The webhook's rules on Secrets of its namespace (self-signed mode). */
export function webhookSecretRules(tlsSecretName: string): PolicyRule[] {
  return [
    { apiGroups: [''], resources: ['secrets'], verbs: READ },
    // `create` cannot be limited by resourceNames: the name is not known before the object exists.
    { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    { apiGroups: [''], resources: ['secrets'], resourceNames: [tlsSecretName], verbs: ['update', 'patch'] },
  ];
}

/** The webhook's rule on its own (cluster-scoped) registration, to inject the CA bundle. */
export function webhookConfigurationRules(webhookConfigurationName: string): PolicyRule[] {
  return [
    {
      apiGroups: ['admissionregistration.k8s.io'],
      resources: ['validatingwebhookconfigurations'],
      resourceNames: [webhookConfigurationName],
      verbs: ['get', 'update', 'patch'],
    },
  ];
}

/** The controller's rules: what the component grants and what the e2e tier binds its identity to. */
export function controllerRules(): PolicyRule[] {
  return CONTROLLER_RULES;
}

/** ClusterRole + ClusterRoleBinding of the controller's ServiceAccount. Returns the binding. */
export function createControllerRbac(
  ctx: BuildContext,
  serviceAccount: k8s.core.v1.ServiceAccount,
): k8s.rbac.v1.ClusterRoleBinding {
  const name = ctx.config.names.controller;
  const role = new k8s.rbac.v1.ClusterRole(
    name,
    { metadata: clusterMeta(ctx, name, 'controller'), rules: controllerRules() },
    ctx.opts,
  );
  return new k8s.rbac.v1.ClusterRoleBinding(
    name,
    {
      metadata: clusterMeta(ctx, name, 'controller'),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role.metadata.name },
      subjects: [{ kind: 'ServiceAccount', name: serviceAccount.metadata.name, namespace: ctx.namespace }],
    },
    ctx.opts,
  );
}

/**
 * Role + RoleBinding (its TLS Secret) and ClusterRole + ClusterRoleBinding (its registration; a Role
 * cannot grant a cluster-scoped object) of the webhook in self-signed mode. Returns the bindings.
 */
export function createWebhookRbac(
  ctx: BuildContext,
  serviceAccount: k8s.core.v1.ServiceAccount,
): Array<k8s.rbac.v1.RoleBinding | k8s.rbac.v1.ClusterRoleBinding> {
  const { names } = ctx.config;
  const name = names.webhook;
  const subjects = [{ kind: 'ServiceAccount', name: serviceAccount.metadata.name, namespace: ctx.namespace }];
  const role = new k8s.rbac.v1.Role(
    name,
    { metadata: namespacedMeta(ctx, name, 'webhook'), rules: webhookSecretRules(names.tlsSecret) },
    ctx.opts,
  );
  const roleBinding = new k8s.rbac.v1.RoleBinding(
    name,
    {
      metadata: namespacedMeta(ctx, name, 'webhook'),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.metadata.name },
      subjects,
    },
    ctx.opts,
  );
  const clusterRole = new k8s.rbac.v1.ClusterRole(
    name,
    {
      metadata: clusterMeta(ctx, name, 'webhook'),
      rules: webhookConfigurationRules(names.webhookConfiguration),
    },
    ctx.opts,
  );
  const clusterRoleBinding = new k8s.rbac.v1.ClusterRoleBinding(
    name,
    {
      metadata: clusterMeta(ctx, name, 'webhook'),
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: clusterRole.metadata.name,
      },
      subjects,
    },
    ctx.opts,
  );
  return [roleBinding, clusterRoleBinding];
}
