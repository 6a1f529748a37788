import type { ConstraintList, DetailLevel, ListedConstraint } from '../../model/api';
import type { KubernetesObject, Labels } from '../../model/kubernetes';
import { objectInQuotaScope } from '../../model/quota-scope';
import { objectRunsReferencedImage } from '../../model/image-references';
import { matchesSelector } from '../../model/selector';
import { targetsInclude } from '../../model/resources';
import type { Constraint, ConstraintDraft, ResourceTarget } from '../../model/constraint';
import { REDACTED, type Viewer } from '../../model/text';
import { isConstraintNameVisible, viewerForConstraint } from '../../model/name-visibility';
import type { ConstraintIndex } from '../index/constraint-index';
import { redactedReference } from './constraint-rendering';
import { compareBySeverityThenName } from './ordering';
import { RevisionCache } from './revision-cache';
import { renderReadableLine } from '../../model/summary-rules';

export interface ConstraintListQuery {
  namespace: string;
  /** Only constraints intercepting this resource (the admitted object's `request.resource`). */
  resource?: ResourceTarget;
  /** Only constraints whose workload selector matches these labels (the admitted pods' labels). */
  labels?: Labels;
  /**
   * The object itself, when known (`check`): constraints whose own scope excludes it (a quota
   * scoped to PriorityClass `high` for a pod without it) are left out.
   */
  object?: KubernetesObject;
}

const listCache = new RevisionCache<readonly ListedConstraint[]>();

/** JSON of the query with sorted labels: unambiguous whatever the label values hold. */
function queryKey(query: ConstraintListQuery): string {
  const labels = query.labels
    ? Object.keys(query.labels)
        .sort()
        .map((key) => [key, query.labels?.[key]])
    : null;
  return JSON.stringify([query.namespace, query.resource?.group, query.resource?.resource, labels]);
}

/**
 * The webhook's query (`GET /api/v1/constraints`): unredacted (`full`) for the in-cluster webhook,
 * which turns it into warnings for the very namespace being deployed to; any other caller gets it
 * at the controller's detail level (http/api-auth.ts), and at `full` the constraints its own RBAC
 * lets it read (`levelOf`, issue 24).
 */
export function buildConstraintList(
  index: ConstraintIndex,
  query: ConstraintListQuery,
  /** Findings about the queried object itself (companion checks at admission), merged by name. */
  prospective: readonly ConstraintDraft[] = [],
  level: DetailLevel = 'full',
  /** Each constraint's level for a caller whose own RBAC was asked (issue 24); never cached. */
  levelOf?: (constraint: ConstraintDraft) => DetailLevel,
): ConstraintList {
  if (levelOf)
    return {
      constraints: matchingConstraints(index, query, prospective).map((constraint) =>
        toListedConstraint(constraint, query.namespace, {
          level: levelOf(constraint),
          namespace: query.namespace,
        }),
      ),
    };
  // Without the object or findings about it the list depends on the index alone: cacheable.
  if (prospective.length === 0 && query.object === undefined)
    return {
      constraints: [
        ...listCache.get(index, `${level}/${queryKey(query)}`, () =>
          listConstraints(index, query, [], level),
        ),
      ],
    };
  return { constraints: listConstraints(index, query, prospective, level) };
}

// What every admission check of one resource in one namespace starts from depends on the index
// alone: kept per index revision instead of copied, filtered and sorted for every review. A sweep of
// every workload (the workloads at risk) goes through here too, so the bound is what admission
// checks between two index changes reuse, not every namespace: the entries live until the revision
// moves (at 1,000 entries with the names of each namespace's constraints beside them, they held
// ~0.6 MiB after a sweep at cluster scale).
const namespaceTargetsCache = new WeakMap<
  ConstraintIndex,
  { revision: number; entries: Map<string, readonly Constraint[]> }
>();
export const MAX_NAMESPACE_TARGETS = 256;

/** A namespace's indexed constraints that intercept one resource, sorted. */
function namespaceTargets(
  index: ConstraintIndex,
  namespace: string,
  resource: ResourceTarget | undefined,
): readonly Constraint[] {
  let generation = namespaceTargetsCache.get(index);
  if (!generation || generation.revision !== index.revision) {
    generation = { revision: index.revision, entries: new Map() };
    namespaceTargetsCache.set(index, generation);
  }
  // Namespace names are DNS labels and groups DNS subdomains: neither holds a space.
  const key = resource ? `${namespace} ${resource.group} ${resource.resource}` : namespace;
  let targets = generation.entries.get(key);
  if (!targets) {
    targets = index
      .constraintsForNamespace(namespace)
      .filter((constraint) => resource === undefined || targetsInclude(constraint.resourceTargets, resource))
      .sort(compareBySeverityThenName);
    // Oldest out first, so that checks across many namespaces stay bounded.
    if (generation.entries.size >= MAX_NAMESPACE_TARGETS) {
      const oldest = generation.entries.keys().next();
      if (!oldest.done) generation.entries.delete(oldest.value);
    }
    generation.entries.set(key, targets);
  }
  return targets;
}

/** How many namespace targets are kept for the index's current revision (tests). */
export function namespaceTargetsKept(index: ConstraintIndex): number {
  const generation = namespaceTargetsCache.get(index);
  return generation && generation.revision === index.revision ? generation.entries.size : 0;
}

/**
 * The constraints a list query selects, sorted as lists are; shared with the admission check.
 * Filtering a sorted list keeps it sorted (the sort is stable and the order total), so only
 * companion findings, when there are any, make a sort per query.
 */
export function matchingConstraints(
  index: ConstraintIndex,
  query: ConstraintListQuery,
  prospective: readonly ConstraintDraft[],
): ConstraintDraft[] {
  const targets = namespaceTargets(index, query.namespace, query.resource);
  const selected = (constraint: ConstraintDraft) =>
    (query.labels === undefined ||
      constraint.workloadSelector === undefined ||
      matchesSelector(constraint.workloadSelector, query.labels, query.namespace)) &&
    (query.object === undefined ||
      (objectInQuotaScope(query.object, constraint.quotaScopes) &&
        objectRunsReferencedImage(query.object, constraint.imageReferences)));
  const constraints: ConstraintDraft[] = targets.filter(selected);
  if (prospective.length === 0) return constraints;
  // Companion findings are few and rare: the namespace's names are read only when there are some.
  const indexedNames = new Set(index.constraintsForNamespace(query.namespace).map(({ name }) => name));
  const extra = prospective.filter(
    (draft) =>
      !indexedNames.has(draft.name) &&
      (query.resource === undefined || targetsInclude(draft.resourceTargets, query.resource)) &&
      selected(draft),
  );
  if (extra.length === 0) return constraints;
  return [...constraints, ...extra].sort(compareBySeverityThenName);
}

/**
 * The indexed constraints a list query selects (companion findings are not in the index): the ones
 * a caller's own RBAC is asked about before answering (issue 24).
 */
export function constraintListCandidates(index: ConstraintIndex, query: ConstraintListQuery): Constraint[] {
  const matching = new Set<ConstraintDraft>(matchingConstraints(index, query, []));
  return index.constraintsForNamespace(query.namespace).filter((constraint) => matching.has(constraint));
}

function listConstraints(
  index: ConstraintIndex,
  query: ConstraintListQuery,
  prospective: readonly ConstraintDraft[],
  level: DetailLevel,
): ListedConstraint[] {
  // `full` for the webhook; the controller's detail level for any other caller (http/api-auth.ts).
  const viewer: Viewer = { level, namespace: query.namespace };
  return matchingConstraints(index, query, prospective).map((constraint) =>
    toListedConstraint(constraint, query.namespace, viewer),
  );
}

/** One list entry, its texts rendered for the viewer (`full` for the webhook). */
export function toListedConstraint(
  constraint: ConstraintDraft,
  namespace: string,
  baseViewer: Viewer,
): ListedConstraint {
  const viewer = viewerForConstraint(constraint, baseViewer);
  const nameVisible = isConstraintNameVisible(constraint, viewer);
  return {
    name: nameVisible ? constraint.name : REDACTED,
    ...redactedReference(constraint, viewer),
    namespace,
    constraintType: constraint.type,
    severity: constraint.severity,
    effect: constraint.effect,
    summary: renderReadableLine(constraint.summary, viewer),
    remediationHint: renderReadableLine(constraint.remediationHint, viewer),
    sourceKind: constraint.source.kind,
    sourceApiVersion: constraint.source.apiVersion,
    sourceName: nameVisible ? constraint.source.name : REDACTED,
    sourceNamespace:
      constraint.source.namespace === null || nameVisible ? constraint.source.namespace : REDACTED,
    tags: [...constraint.tags],
    detailLevel: viewer.level,
  };
}
