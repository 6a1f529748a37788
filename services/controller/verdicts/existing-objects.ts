import { groupOf, withoutManagedFields, type KubernetesObject } from '../../model/kubernetes';
import { pluralOfKind, targetsInclude } from '../../model/resources';
import type { ResourceTarget } from '../../model/constraint';
import type { AdmissionOperation } from './types';

// The API server's view of a request (issue 31): applying an object that already exists is an
// UPDATE, with the stored object as `oldObject`. A quota then charges only the increase, a
// `count/...` key nothing, and policies see `request.operation` and `oldObject` as they will.
// `check` and the MCP `check` tool do not know whether the object exists: they ask here. The
// webhook knows (its AdmissionReview says), so its requests never come here.

/**
 * The stored object with the same kind, namespace and name; undefined when there is none;
 * `CANNOT_TELL` when whether there is one cannot be known (a kind the controller does not read).
 */
export type FindExistingObject = (
  object: KubernetesObject,
) => Promise<KubernetesObject | undefined | typeof CANNOT_TELL>;

export const CANNOT_TELL = 'cannot-tell';

export const NO_EXISTING_OBJECTS: FindExistingObject = () => Promise.resolve(undefined);

export interface AppliedOperation {
  operation: AdmissionOperation;
  oldObject?: KubernetesObject;
  /** A CREATE of an object that may exist (see AdmittedObject.mayExist). */
  mayExist?: true;
}

/** CREATE, or UPDATE with the stored object as `oldObject` when one exists. */
export async function operationOfApply(
  object: KubernetesObject,
  find: FindExistingObject,
): Promise<AppliedOperation> {
  const name = object.metadata?.name;
  // An object without a name (generateName) is always created.
  if (typeof name !== 'string' || name === '') return { operation: 'CREATE' };
  const existing = await find(object);
  if (existing === CANNOT_TELL) return { operation: 'CREATE', mayExist: true };
  return existing ? { operation: 'UPDATE', oldObject: existing } : { operation: 'CREATE' };
}

/** GET of one object's path; undefined when the API server says it does not exist (404). */
export type GetObject = (path: string) => Promise<KubernetesObject | undefined>;

/** `/apis/apps/v1/namespaces/shop/deployments/web` (`/api/v1/...` for the core group). */
export function objectPath(object: KubernetesObject, namespace: string | undefined): string {
  const apiVersion = object.apiVersion ?? 'v1';
  const prefix = groupOf(apiVersion) === '' ? `/api/${apiVersion}` : `/apis/${apiVersion}`;
  const scope = namespace === undefined ? '' : `/namespaces/${encodeURIComponent(namespace)}`;
  const name = encodeURIComponent(object.metadata?.name ?? '');
  return `${prefix}${scope}/${pluralOfKind(object.kind ?? '')}/${name}`;
}

/**
 * On a cluster: the stored object, read with the controller's own credentials for the kinds its
 * ClusterRole lets it read (workloads, Services, Ingresses, ...; never Secrets or ConfigMaps, which it
 * does not read, nor anything else). For a kind it may not read, or after a failed read, whether
 * the object exists cannot be told: it is checked as a CREATE that may be an UPDATE.
 */
export function objectsInCluster(
  get: GetObject,
  readable: readonly ResourceTarget[],
  namespaceOf: (object: KubernetesObject) => string | undefined,
  onFailure: (failure: unknown) => void = () => undefined,
): FindExistingObject {
  return async (object) => {
    const target = { group: groupOf(object.apiVersion), resource: pluralOfKind(object.kind ?? '') };
    if (!targetsInclude(readable, target)) return CANNOT_TELL;
    try {
      const stored = await get(objectPath(object, namespaceOf(object)));
      return stored ? withoutManagedFields(stored) : undefined;
    } catch (failure) {
      onFailure(failure);
      return CANNOT_TELL;
    }
  };
}
