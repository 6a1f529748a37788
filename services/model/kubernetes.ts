// The minimum of the Kubernetes object model the core needs. Objects come from YAML files or the
// API server untyped, so every field is optional and read defensively by the adapters.

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  resourceVersion?: string;
}

export interface KubernetesObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [field: string]: unknown;
}

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export type Labels = Readonly<Record<string, string>>;

/** A resource as admission rules name it: API group and plural (`apps`, `deployments`). */
export interface ResourceTarget {
  group: string;
  resource: string;
}

/** `apps/v1` → `apps`; `v1` → `` (the core group). */
export function groupOf(apiVersion: string | undefined): string {
  // Objects from files are untyped: a non-string apiVersion has no group rather than crashing.
  if (typeof apiVersion !== 'string' || !apiVersion) return '';
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

export function versionOf(apiVersion: string | undefined): string {
  if (typeof apiVersion !== 'string' || !apiVersion) return '';
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? apiVersion : apiVersion.slice(slash + 1);
}

/**
 * Who an object is (group, kind, namespace, name), read without trusting its fields: objects from
 * files, fuzzers or a broken API may carry anything there, and a non-string is read as absent.
 */
export function referenceOf(object: KubernetesObject): ObjectReference {
  const metadata: unknown = object.metadata;
  const namespace = isRecord(metadata) ? metadata.namespace : undefined;
  const name = isRecord(metadata) ? metadata.name : undefined;
  return {
    group: groupOf(object.apiVersion),
    kind: typeof object.kind === 'string' ? object.kind : '',
    namespace: typeof namespace === 'string' ? namespace : null,
    name: typeof name === 'string' ? name : '',
  };
}

/** Identity of an object when it has no UID (manifest files): kind/namespace/name with its group. */
export function objectKey(object: KubernetesObject): string {
  const uid: unknown = object.metadata?.uid;
  if (typeof uid === 'string' && uid !== '') return `uid:${uid}`;
  return referenceKey(referenceOf(object));
}

export interface ObjectReference {
  group: string;
  kind: string;
  namespace: string | null;
  name: string;
}

export function referenceKey(reference: ObjectReference): string {
  return `${reference.group}/${reference.kind}/${reference.namespace ?? ''}/${reference.name}`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isStringRecord(value: unknown): value is Record<string, string> {
  return isRecord(value) && Object.values(value).every((entry) => typeof entry === 'string');
}

/** The value at a path of nested records; undefined as soon as one step is not a record. */
export function readPath(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

/** The string entries of a label map; a partly malformed map keeps its good entries. */
export function stringLabels(value: unknown): Labels {
  if (!isRecord(value)) return {};
  if (isStringRecord(value)) return value;
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

// Kubernetes name rules (apimachinery validation): used to reject bad path parameters early.
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function isDns1123Label(value: string): boolean {
  return value.length <= 63 && DNS1123_LABEL.test(value);
}

/** API groups kube-apiserver serves itself: their kinds never need a CRD. */
export const BUILT_IN_API_GROUPS: ReadonlySet<string> = new Set([
  '',
  'apps',
  'batch',
  'autoscaling',
  'policy',
  'networking.k8s.io',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'rbac.authorization.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'storage.k8s.io',
  'scheduling.k8s.io',
  'node.k8s.io',
  'certificates.k8s.io',
]);

/** The four DNS names a Service answers to in the cluster, shortest first (spec 5: the webhook's). */
export function serviceDnsNames(serviceName: string, namespace: string): string[] {
  return [
    serviceName,
    `${serviceName}.${namespace}`,
    `${serviceName}.${namespace}.svc`,
    `${serviceName}.${namespace}.svc.cluster.local`,
  ];
}

/**
 * The object without `metadata.managedFields`: the API server's record of which client owns which
 * field, on every object it sends, often the largest part of an object (every manager, every field).
 * Nothing Forewarn evaluates or shows reads it (no policy in the real-world corpus does either), so
 * the webhook leaves it out of admission checks and the index out of the source objects it keeps
 * (issue 26). Returns the object itself when there is nothing to leave out; never alters it.
 */
export function withoutManagedFields<Value extends { metadata?: unknown }>(object: Value): Value {
  const metadata = object.metadata;
  if (!isRecord(metadata) || !('managedFields' in metadata)) return object;
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  const { managedFields, ...rest } = metadata;
  return { ...object, metadata: rest };
}
