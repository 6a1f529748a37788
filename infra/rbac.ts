// Least-privilege access of both processes. The controller only reads (get/list/watch) the kinds it
// watches: its adapters', the inventory's, the companions' and the configured param kinds'; never
// Secrets, and no write verb but on its own PolicyReports when `controller.policyReports` is on.
// The webhook may write only its own TLS Secret and patch only its own webhook configuration
// (self-signed mode).
import * as k8s from '@pulumi/kubernetes';
import type { ResourceTarget } from '../services/model/kubernetes';
import type { ParamKindResource } from '../services/model/param-kinds';
import { controllerReadTargets } from '../services/model/watched-kinds';
import { clusterMeta, namespacedMeta, type BuildContext } from './common';

type PolicyRule = k8s.types.input.rbac.v1.PolicyRule;

const READ = ['get', 'list', 'watch'];

/** Resources grouped by API group, groups and resources in first-seen order, without repeats. */
export function groupResources(
  targets: readonly ResourceTarget[],
): Array<{ apiGroups: string[]; resources: string[] }> {
  const byGroup = new Map<string, string[]>();
  for (const { group, resource } of targets) {
    const resources = byGroup.get(group) ?? [];
    if (!resources.includes(resource)) resources.push(resource);
    byGroup.set(group, resources);
  }
  return [...byGroup].map(([group, resources]) => ({ apiGroups: [group], resources }));
}

/**
 * Read access of the controller, one rule per API group, derived from what it watches
 * (services/model/watched-kinds.ts): a new policy source brings its permission with it. Groups an
 * adapter owns whole (Gatekeeper creates one kind per ConstraintTemplate) are read whole. The
 * configured param kinds (`controller.paramKinds`) are read one resource each, nothing more.
 */
export function controllerRules(paramKinds: readonly ParamKindResource[] = []): PolicyRule[] {
  return groupResources(controllerReadTargets(paramKinds)).map((rule) => ({ ...rule, verbs: READ }));
}

/**
 * The controller checks the webhook's token before answering it unredacted (`--api-auth=tokenreview`,
 * DESIGN.md 5), and a caller's own token and rights: it may create TokenReviews and
 * SubjectAccessReviews, which read nothing and change nothing.
 */
export const CONTROLLER_TOKEN_REVIEW_RULES: PolicyRule[] = [
  { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
  // Detail levels that follow the caller's RBAC (`--caller-rbac`, issue 24): it asks whether a caller
  // may `get` a constraint's source. A SubjectAccessReview too reads nothing and changes nothing.
  { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
];

/**
 * `controller.policyReports` (`--policy-reports`, issue 35): the controller writes its own
 * PolicyReports and ClusterPolicyReport. It lists them (its own, by label) at start, reads one when a
 * write conflicts, creates, updates with the resourceVersion read and deletes; no watch, no patch.
 * The names cannot be limited by resourceNames: `create` and `list` do not take them.
 */
export const CONTROLLER_POLICY_REPORT_RULES: PolicyRule[] = [
  {
    apiGroups: ['wgpolicyk8s.io'],
    resources: ['policyreports', 'clusterpolicyreports'],
    verbs: ['get', 'list', 'create', 'update', 'delete'],
  },
];

/**
 * The webhook's rules on Secrets of its namespace (self-signed mode): its own TLS Secret only. A
 * list or watch is allowed by `resourceNames` when it selects that name (`fieldSelector
 * metadata.name=...`), which is how the webhook watches it.
 */
export function webhookSecretRules(tlsSecretName: string): PolicyRule[] {
  return [
    { apiGroups: [''], resources: ['secrets'], resourceNames: [tlsSecretName], verbs: READ },
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

/** ClusterRole + ClusterRoleBinding of the controller's ServiceAccount. Returns the binding. */
export function createControllerRbac(
  ctx: BuildContext,
  serviceAccount: k8s.core.v1.ServiceAccount,
): k8s.rbac.v1.ClusterRoleBinding {
  const name = ctx.config.names.controller;
  const role = new k8s.rbac.v1.ClusterRole(
    name,
    {
      metadata: clusterMeta(ctx, name, 'controller'),
      rules: [
        ...controllerRules(ctx.config.controller.paramKinds),
        ...CONTROLLER_TOKEN_REVIEW_RULES,
        ...(ctx.config.controller.policyReports ? CONTROLLER_POLICY_REPORT_RULES : []),
      ],
    },
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
