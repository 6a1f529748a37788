import type { NamespaceScope, ResourceTarget } from './constraint';

// Which resources live outside namespaces. An admission rule that intercepts only these reaches no
// developer's namespace (DESIGN.md section 3): creating a CertificateSigningRequest or a ServiceCIDR
// is a cluster admin's act, so such rules belong in no namespace's report.

/** Cluster-scoped resources by `group/plural` (built-in and the policy engines'). */
const CLUSTER_SCOPED_RESOURCES = new Set([
  '/namespaces',
  '/nodes',
  '/persistentvolumes',
  '/componentstatuses',
  'admissionregistration.k8s.io/validatingwebhookconfigurations',
  'admissionregistration.k8s.io/mutatingwebhookconfigurations',
  'admissionregistration.k8s.io/validatingadmissionpolicies',
  'admissionregistration.k8s.io/validatingadmissionpolicybindings',
  'admissionregistration.k8s.io/mutatingadmissionpolicies',
  'admissionregistration.k8s.io/mutatingadmissionpolicybindings',
  'apiextensions.k8s.io/customresourcedefinitions',
  'apiregistration.k8s.io/apiservices',
  'authentication.k8s.io/tokenreviews',
  'authentication.k8s.io/selfsubjectreviews',
  'authorization.k8s.io/subjectaccessreviews',
  'authorization.k8s.io/selfsubjectaccessreviews',
  'authorization.k8s.io/selfsubjectrulesreviews',
  'certificates.k8s.io/certificatesigningrequests',
  'certificates.k8s.io/clustertrustbundles',
  'flowcontrol.apiserver.k8s.io/flowschemas',
  'flowcontrol.apiserver.k8s.io/prioritylevelconfigurations',
  'networking.k8s.io/ingressclasses',
  'networking.k8s.io/ipaddresses',
  'networking.k8s.io/servicecidrs',
  'node.k8s.io/runtimeclasses',
  'policy/podsecuritypolicies',
  'rbac.authorization.k8s.io/clusterroles',
  'rbac.authorization.k8s.io/clusterrolebindings',
  'resource.k8s.io/deviceclasses',
  'resource.k8s.io/resourceslices',
  'scheduling.k8s.io/priorityclasses',
  'storage.k8s.io/csidrivers',
  'storage.k8s.io/csinodes',
  'storage.k8s.io/storageclasses',
  'storage.k8s.io/volumeattachments',
  'storage.k8s.io/volumeattributesclasses',
  'apiserver.config.k8s.io/admissionconfigurations',
  'kyverno.io/clusterpolicies',
  'kyverno.io/clustercleanuppolicies',
  'templates.gatekeeper.sh/constrainttemplates',
  'cilium.io/ciliumclusterwidenetworkpolicies',
  'cert-manager.io/clusterissuers',
  'policy.networking.k8s.io/adminnetworkpolicies',
  'policy.networking.k8s.io/baselineadminnetworkpolicies',
]);

/** Resources named only by plural (policy engines that omit the group) that are cluster-scoped. */
const CLUSTER_SCOPED_PLURALS = new Set(
  [...CLUSTER_SCOPED_RESOURCES].map((key) => key.slice(key.indexOf('/') + 1)),
);

/** Whether a target can only be a cluster-scoped resource (`*` may be namespaced: false). */
export function isClusterScopedTarget(target: ResourceTarget): boolean {
  // A subresource (`certificatesigningrequests/approval`) lives where its resource does.
  const resource = target.resource.split('/')[0];
  if (resource === '*') return false;
  if (target.group === '*') return CLUSTER_SCOPED_PLURALS.has(resource);
  return CLUSTER_SCOPED_RESOURCES.has(`${target.group}/${resource}`);
}

/** Whether every target is cluster-scoped (no targets given means any resource: false). */
export function targetsOnlyClusterScoped(targets: readonly ResourceTarget[] | undefined): boolean {
  return targets !== undefined && targets.length > 0 && targets.every(isClusterScopedTarget);
}

/** The scope of a constraint once its targets are known: none when it intercepts no namespaced kind. */
export function scopeReachingTargets(
  scope: NamespaceScope,
  targets: readonly ResourceTarget[] | undefined,
): NamespaceScope {
  if (scope.kind === 'none' || !targetsOnlyClusterScoped(targets)) return scope;
  return { kind: 'none', reason: 'it intercepts only cluster-scoped resources' };
}
