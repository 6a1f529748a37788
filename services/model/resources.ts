import type { ResourceTarget } from './kubernetes';
import { ADMITTED_WORKLOAD_RESOURCES, WORKLOAD_KINDS } from './workload-kinds';
import { ownEntry } from './own-entry';

// Kind ↔ plural resource names. Admission constraints name what they intercept by plural resource
// (`ingresses`), policy engines by kind (`Ingress`); both are compared as plural resources.

const IRREGULAR_PLURALS: Record<string, string> = {
  Endpoints: 'endpoints',
  Ingress: 'ingresses',
  IngressClass: 'ingressclasses',
  NetworkPolicy: 'networkpolicies',
  PodSecurityPolicy: 'podsecuritypolicies',
  PriorityClass: 'priorityclasses',
  StorageClass: 'storageclasses',
  RuntimeClass: 'runtimeclasses',
  PodDisruptionBudget: 'poddisruptionbudgets',
  ValidatingAdmissionPolicy: 'validatingadmissionpolicies',
  CiliumNetworkPolicy: 'ciliumnetworkpolicies',
  CiliumClusterwideNetworkPolicy: 'ciliumclusterwidenetworkpolicies',
  AuthorizationPolicy: 'authorizationpolicies',
  ClusterPolicy: 'clusterpolicies',
  Policy: 'policies',
};

/** The plural resource of a kind, following the Kubernetes API's own pluralisation. */
export function pluralOfKind(kind: string): string {
  const irregular = ownEntry(IRREGULAR_PLURALS, kind);
  if (irregular) return irregular;
  const lower = kind.toLowerCase();
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  return `${lower}s`;
}

/** Group of the well-known kinds policy engines name without a group. */
const KNOWN_KIND_GROUPS: Record<string, string> = {
  Pod: '',
  Service: '',
  ConfigMap: '',
  Secret: '',
  Namespace: '',
  ServiceAccount: '',
  PersistentVolumeClaim: '',
  ...Object.fromEntries(WORKLOAD_KINDS.map((entry) => [entry.kind, entry.group])),
  Ingress: 'networking.k8s.io',
  NetworkPolicy: 'networking.k8s.io',
};

export function groupOfKnownKind(kind: string): string | undefined {
  return ownEntry(KNOWN_KIND_GROUPS, kind);
}

/** The workload resources the webhook is registered for (spec 4.4), from the workload kinds table. */
export const WORKLOAD_RESOURCES: readonly ResourceTarget[] = ADMITTED_WORKLOAD_RESOURCES;

/** Everything the webhook is registered for (spec 4.4): workloads, Services and ConfigMaps. */
export const WEBHOOK_RESOURCES: readonly ResourceTarget[] = [
  ...WORKLOAD_RESOURCES,
  { group: '', resource: 'services' },
  { group: '', resource: 'configmaps' },
];

export function targetMatches(target: ResourceTarget, requested: ResourceTarget): boolean {
  return (
    (target.group === '*' || target.group === requested.group) &&
    (target.resource === '*' || target.resource === requested.resource)
  );
}

/** Whether a constraint with these targets (undefined: any) intercepts the requested resource. */
export function targetsInclude(
  targets: readonly ResourceTarget[] | undefined,
  requested: ResourceTarget,
): boolean {
  return targets === undefined || targets.some((target) => targetMatches(target, requested));
}

/** Parses the `resource` query parameter: `group/plural`, or a bare `plural` for the core group. */
export function parseResourceTarget(value: string): ResourceTarget {
  const slash = value.lastIndexOf('/');
  return slash === -1
    ? { group: '', resource: value }
    : { group: value.slice(0, slash), resource: value.slice(slash + 1) };
}

/**
 * Resources of the built-in API groups, enough to tell that an admission rule's `apiGroups` ×
 * `resources` names a pair no API server serves (`apps/pods`, core `deployments`): such a pair never
 * matches a request. Groups and resources outside this table (custom resources) are never judged.
 */
const BUILT_IN_RESOURCES: Readonly<Record<string, readonly string[]>> = {
  '': [
    'pods',
    'services',
    'configmaps',
    'secrets',
    'namespaces',
    'serviceaccounts',
    'persistentvolumeclaims',
    'persistentvolumes',
    'nodes',
    'endpoints',
    'events',
    'limitranges',
    'resourcequotas',
    'replicationcontrollers',
    'podtemplates',
  ],
  apps: ['deployments', 'statefulsets', 'daemonsets', 'replicasets', 'controllerrevisions'],
  batch: ['jobs', 'cronjobs'],
  autoscaling: ['horizontalpodautoscalers'],
  policy: ['poddisruptionbudgets'],
  'networking.k8s.io': ['ingresses', 'ingressclasses', 'networkpolicies'],
  'rbac.authorization.k8s.io': ['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings'],
};

const BUILT_IN_GROUP_OF = new Map(
  Object.entries(BUILT_IN_RESOURCES).flatMap(([group, resources]) =>
    resources.map((resource) => [resource, group] as const),
  ),
);

/**
 * Whether an API server can serve this pair: false only for a built-in group and a built-in
 * resource of another group (`apps/pods`); wildcards and anything unknown are kept.
 */
export function isServedTarget(target: ResourceTarget): boolean {
  const served = ownEntry(BUILT_IN_RESOURCES, target.group);
  if (!served || served.includes(target.resource)) return true;
  const home = BUILT_IN_GROUP_OF.get(target.resource);
  return home === undefined;
}
