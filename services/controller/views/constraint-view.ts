import type { ConstraintView, DetailLevel } from '../../model/api';
import type { Constraint } from '../../model/constraint';
import { isConstraintNameVisible, viewerForConstraint } from '../../model/name-visibility';
import type { ConstraintIndex } from '../index/constraint-index';
import { affectedWorkloads, renderMetrics, renderName, renderRemediation } from './constraint-rendering';
import { compareBySeverityThenName } from './ordering';
import { renderReadableLine } from '../../model/summary-rules';

/**
 * Finds a constraint of a namespace by its real name (a cluster-scoped constraint is found under
 * every namespace it applies to). Two sources may share a name (a NetworkPolicy and a quota both
 * called `web`): the first in report order wins, so the answer is stable.
 *
 * Only names the viewer may see are found: below `full`, a 200 for a guessed cross-namespace or
 * cluster-scoped name (and a 404 for a wrong guess) would confirm a name the views redact.
 */
export function findConstraint(
  index: ConstraintIndex,
  namespace: string,
  name: string,
  level: DetailLevel,
  levelOf: (constraint: Constraint) => DetailLevel = () => level,
): Constraint | undefined {
  return index
    .constraintsForNamespace(namespace)
    .filter(
      (constraint) =>
        constraint.name === name &&
        isConstraintNameVisible(constraint, { level: levelOf(constraint), namespace }),
    )
    .sort((left, right) => compareBySeverityThenName(left, right))[0];
}

export function buildConstraintView(
  index: ConstraintIndex,
  namespace: string,
  constraint: Constraint,
  level: DetailLevel,
): ConstraintView {
  const viewer = viewerForConstraint(constraint, { level, namespace });
  return {
    name: renderName(constraint, viewer),
    summary: renderReadableLine(constraint.summary, viewer),
    namespace,
    constraint_type: constraint.type,
    severity: constraint.severity,
    source_kind: constraint.source.kind,
    source_api_version: constraint.source.apiVersion,
    effect: constraint.effect,
    affected_workloads: affectedWorkloads(constraint, index.workloadsInNamespace(namespace)),
    tags: [...constraint.tags],
    detail_level: level,
    last_observed: constraint.lastObserved,
    remediation: renderRemediation(constraint, viewer),
    metrics: renderMetrics(constraint, viewer),
  };
}
