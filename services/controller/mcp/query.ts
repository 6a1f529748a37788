import type { ConstraintType, DetailLevel, ReportEntry, Severity } from '../../model/api';
import type { Labels } from '../../model/kubernetes';
import { viewerForConstraint } from '../../model/name-visibility';
import { matchesSelector } from '../../model/selector';
import type { Viewer } from '../../model/text';
import type { ConstraintIndex } from '../index/constraint-index';
import type { Constraint } from '../../model/constraint';
import { buildReportEntry, sortedForViewer } from '../views/report';
import { renderReadableLine } from '../../model/summary-rules';

// The `query` tool: the report of a namespace narrowed to what one workload (by its pod labels),
// one constraint type or one severity meets. Entries are report entries (same rendering, same
// privacy, same order) plus the one-line summary, which agents need to explain a constraint.

export interface ConstraintQueryInput {
  namespace: string;
  /** Pod labels of a workload: only constraints whose selector matches them (or that select all pods). */
  labels?: Labels;
  type?: ConstraintType;
  severity?: Severity;
}

export interface QueryEntry extends ReportEntry {
  summary: string;
}

export interface QueryResult {
  namespace: string;
  detailLevel: DetailLevel;
  filters: Omit<ConstraintQueryInput, 'namespace'>;
  matchCount: number;
  constraints: QueryEntry[];
}

/** The constraints `query` would show (issue 24: the caller's rights are asked about these first). */
export function queryCandidates(index: ConstraintIndex, input: ConstraintQueryInput): Constraint[] {
  return index
    .constraintsForNamespace(input.namespace)
    .filter((constraint) => input.type === undefined || constraint.type === input.type)
    .filter((constraint) => input.severity === undefined || constraint.severity === input.severity)
    .filter(
      (constraint) =>
        input.labels === undefined ||
        constraint.workloadSelector === undefined ||
        matchesSelector(constraint.workloadSelector, input.labels, input.namespace),
    );
}

export function queryConstraints(
  index: ConstraintIndex,
  input: ConstraintQueryInput,
  level: DetailLevel,
  levelOf: (constraint: Constraint) => DetailLevel = () => level,
): QueryResult {
  const viewer: Viewer = { level, namespace: input.namespace };
  const viewerOf = (constraint: Constraint): Viewer => ({
    level: levelOf(constraint),
    namespace: input.namespace,
  });
  const matching = queryCandidates(index, input);
  const constraints = sortedForViewer(matching, viewer, viewerOf).map(({ constraint, name }) => ({
    ...buildReportEntry(constraint, name, viewerOf(constraint)),
    summary: renderReadableLine(constraint.summary, viewerForConstraint(constraint, viewerOf(constraint))),
  }));
  const filters: QueryResult['filters'] = {};
  if (input.labels !== undefined) filters.labels = input.labels;
  if (input.type !== undefined) filters.type = input.type;
  if (input.severity !== undefined) filters.severity = input.severity;
  return {
    namespace: input.namespace,
    detailLevel: level,
    filters,
    matchCount: constraints.length,
    constraints,
  };
}
