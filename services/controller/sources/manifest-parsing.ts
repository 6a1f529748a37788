import { groupOf, isRecord, referenceKey, type KubernetesObject } from '../../model/kubernetes';
import { readYamlDocuments } from './yaml-documents';

// Pure parsing of manifest files: multi-document YAML (JSON is YAML too), `kind: List` and
// `<Kind>List` objects flattened, namespaces defaulted as `kubectl apply` would.

export interface ManifestProblem {
  file: string;
  line: number;
  message: string;
}

export interface ParsedManifest {
  objects: KubernetesObject[];
  problems: ManifestProblem[];
}

/** Cluster-scoped kinds (by `group/Kind`) that must not get the `default` namespace. */
const CLUSTER_SCOPED_KINDS = new Set([
  '/Namespace',
  '/Node',
  '/PersistentVolume',
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding',
  'apiextensions.k8s.io/CustomResourceDefinition',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
  'storage.k8s.io/StorageClass',
  'scheduling.k8s.io/PriorityClass',
  'cilium.io/CiliumClusterwideNetworkPolicy',
  'projectcalico.org/GlobalNetworkPolicy',
  'crd.projectcalico.org/GlobalNetworkPolicy',
  'policy.networking.k8s.io/AdminNetworkPolicy',
  'policy.networking.k8s.io/BaselineAdminNetworkPolicy',
  'kyverno.io/ClusterPolicy',
  'kyverno.io/ClusterCleanupPolicy',
  'policies.kyverno.io/ValidatingPolicy',
  'policies.kyverno.io/ImageValidatingPolicy',
  'policies.kyverno.io/MutatingPolicy',
  'policies.kyverno.io/GeneratingPolicy',
  'policies.kyverno.io/DeletingPolicy',
  'cert-manager.io/ClusterIssuer',
  'templates.gatekeeper.sh/ConstraintTemplate',
]);

/** Groups whose every kind is cluster-scoped (Gatekeeper creates one kind per constraint template). */
const CLUSTER_SCOPED_GROUPS = new Set(['constraints.gatekeeper.sh']);

export function isClusterScoped(apiVersion: string | undefined, kind: string | undefined): boolean {
  const group = groupOf(apiVersion);
  return CLUSTER_SCOPED_GROUPS.has(group) || CLUSTER_SCOPED_KINDS.has(`${group}/${kind ?? ''}`);
}

export function manifestObjectKey(object: KubernetesObject): string {
  return referenceKey({
    group: groupOf(object.apiVersion),
    kind: object.kind ?? '',
    namespace: object.metadata?.namespace ?? null,
    name: object.metadata?.name ?? '',
  });
}

function flatten(
  value: unknown,
  file: string,
  line: number,
  problems: ManifestProblem[],
  defaultNamespace = 'default',
): KubernetesObject[] {
  if (value === null || value === undefined) return [];
  if (!isRecord(value)) {
    problems.push({ file, line, message: 'document is not a Kubernetes object (expected a mapping)' });
    return [];
  }
  if (typeof value.kind === 'string' && value.kind.endsWith('List') && Array.isArray(value.items))
    return value.items.flatMap((item) => flatten(item, file, line, problems, defaultNamespace));
  const object = value as KubernetesObject;
  if (typeof object.apiVersion !== 'string' || typeof object.kind !== 'string') {
    problems.push({ file, line, message: 'object has no apiVersion or kind' });
    return [];
  }
  if (!isRecord(object.metadata) || typeof object.metadata.name !== 'string' || object.metadata.name === '') {
    problems.push({ file, line, message: `${object.kind} has no metadata.name` });
    return [];
  }
  const clusterScoped = isClusterScoped(object.apiVersion, object.kind);
  const metadata = { ...object.metadata };
  if (clusterScoped) delete metadata.namespace;
  else metadata.namespace = metadata.namespace || defaultNamespace;
  return [{ ...object, metadata }];
}

export interface ParseManifestOptions {
  /** Namespace of namespaced objects that set none, as `kubectl apply -n` would give them. */
  defaultNamespace?: string;
}

export function parseManifest(
  file: string,
  content: string,
  options: ParseManifestOptions = {},
): ParsedManifest {
  const problems: ManifestProblem[] = [];
  const objects: KubernetesObject[] = [];
  for (const document of readYamlDocuments(content)) {
    if ('problem' in document) problems.push({ file, line: document.line, message: document.problem });
    else objects.push(...flatten(document.value, file, document.line, problems, options.defaultNamespace));
  }
  return { objects, problems };
}
