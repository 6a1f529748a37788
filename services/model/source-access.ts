import type { Constraint, SourceObject } from './constraint';
import { COMPANION_KINDS, INVENTORY_KINDS, POLICY_SOURCE_KINDS, type AdapterKind } from './watched-kinds';

// What a caller must be allowed to read to see a constraint unredacted: `get` on its source object
// (issue 24). The resource comes from the watched-kinds registry (the kinds the controller reads,
// with their plurals), so the question asked of the API server names exactly the object the
// controller itself read; a kind the registry does not know gets no question, and so no elevation.

/** The attributes of a SubjectAccessReview for `get` on one object. */
export interface ObjectReadAccess {
  group: string;
  /** Plural resource name, e.g. `clusterpolicies`. */
  resource: string;
  /** null for a cluster-scoped object. */
  namespace: string | null;
  name: string;
}

/** Gatekeeper creates one CRD per template in this group; its plural is the lower-cased kind. */
const GATEKEEPER_CONSTRAINTS_GROUP = 'constraints.gatekeeper.sh';

const KNOWN_KINDS: ReadonlyMap<string, AdapterKind> = new Map(
  [
    ...Object.values(POLICY_SOURCE_KINDS).flatMap((source) => source.kinds),
    ...INVENTORY_KINDS,
    ...COMPANION_KINDS,
  ].map((kind) => [`${kind.group}/${kind.kind}`, kind]),
);

/** The API group of an `apiVersion` (`v1` is the core group, ''). */
export function groupOfApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

/** `get` on the source object, or undefined when its kind is not one the controller watches. */
export function sourceReadAccess(source: SourceObject): ObjectReadAccess | undefined {
  if (source.name === '') return undefined;
  const group = groupOfApiVersion(source.apiVersion);
  if (group === GATEKEEPER_CONSTRAINTS_GROUP)
    return { group, resource: source.kind.toLowerCase(), namespace: null, name: source.name };
  const known = KNOWN_KINDS.get(`${group}/${source.kind}`);
  if (!known) return undefined;
  return {
    group,
    resource: known.plural,
    namespace: known.namespaced ? source.namespace : null,
    name: source.name,
  };
}

/** A stable key for one object's read access (cache keys, sets). */
export function readAccessKey(access: ObjectReadAccess): string {
  return `${access.group}/${access.resource}/${access.namespace ?? ''}/${access.name}`;
}

/**
 * Every `get` a caller needs to see this constraint in full: its source and every object the adapter
 * read to describe it. Undefined when any of them is of a kind the controller cannot name (no
 * elevation then).
 */
export function constraintReadAccesses(
  constraint: Pick<Constraint, 'source' | 'relatedSources'>,
): ObjectReadAccess[] | undefined {
  const accesses: ObjectReadAccess[] = [];
  for (const source of [constraint.source, ...(constraint.relatedSources ?? [])]) {
    const access = sourceReadAccess(source);
    if (!access) return undefined;
    accesses.push(access);
  }
  return accesses;
}
