import type { ConstraintList, ListedConstraint } from '../../model/api';
import type { Labels } from '../../model/kubernetes';
import { matchesLabelSelector } from '../../model/label-selector';
import { targetsInclude } from '../../model/resources';
import type { ConstraintDraft, ResourceTarget } from '../../model/constraint';
import { renderFullText, type Text } from '../../model/text';
import type { ConstraintIndex } from '../index/constraint-index';
import { compareBySeverityThenName } from './ordering';
import { RevisionCache } from './revision-cache';

export interface ConstraintListQuery {
  namespace: string;
  /** Only constraints intercepting this resource (the admitted object's `request.resource`). */
  resource?: ResourceTarget;
  /** Only constraints whose workload selector matches these labels (the admitted pods' labels). */
  labels?: Labels;
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
 * The webhook's query (`GET /api/v1/constraints`): unredacted, because it serves the in-cluster
 * webhook, which turns it into warnings for the very namespace being deployed to.
 */
export function buildConstraintList(
  index: ConstraintIndex,
  query: ConstraintListQuery,
  /** Findings about the queried object itself (companion checks at admission), merged by name. */
  prospective: readonly ConstraintDraft[] = [],
): ConstraintList {
  // Without findings about the queried object the list depends on the index alone: cacheable.
  if (prospective.length === 0)
    return {
      constraints: [...listCache.get(index, queryKey(query), () => listConstraints(index, query, []))],
    };
  return { constraints: listConstraints(index, query, prospective) };
}

/** The constraints a list query selects, sorted as lists are; shared with the admission check. */
export function matchingConstraints(
  index: ConstraintIndex,
  query: ConstraintListQuery,
  prospective: readonly ConstraintDraft[],
): ConstraintDraft[] {
  const indexed = index.constraintsForNamespace(query.namespace);
  const indexedNames = new Set(indexed.map((constraint) => constraint.name));
  const extra = prospective.filter((draft) => !indexedNames.has(draft.name));
  const constraints = [...indexed, ...extra]
    .filter(
      (constraint) =>
        query.resource === undefined || targetsInclude(constraint.resourceTargets, query.resource),
    )
    .filter(
      (constraint) =>
        query.labels === undefined ||
        constraint.workloadSelector === undefined ||
        matchesLabelSelector(constraint.workloadSelector, query.labels),
    )
    .sort(compareBySeverityThenName);
  return constraints;
}

function listConstraints(
  index: ConstraintIndex,
  query: ConstraintListQuery,
  prospective: readonly ConstraintDraft[],
): ListedConstraint[] {
  return matchingConstraints(index, query, prospective).map((constraint) =>
    toListedConstraint(constraint, query.namespace, renderFullText),
  );
}

/** One list entry, its texts rendered by the caller (unredacted for the webhook). */
export function toListedConstraint(
  constraint: ConstraintDraft,
  namespace: string,
  render: (value: Text) => string,
): ListedConstraint {
  return {
    name: constraint.name,
    namespace,
    constraintType: constraint.type,
    severity: constraint.severity,
    effect: constraint.effect,
    summary: render(constraint.summary),
    remediationHint: render(constraint.remediationHint),
    sourceKind: constraint.source.kind,
    sourceApiVersion: constraint.source.apiVersion,
    sourceName: constraint.source.name,
    sourceNamespace: constraint.source.namespace,
    tags: [...constraint.tags],
  };
}
