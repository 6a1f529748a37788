import { SCHEMA_VERSION, type DetailLevel, type Report, type ReportEntry } from '../../model/api';
import type { Constraint } from '../../model/constraint';
import type { Viewer } from '../../model/text';
import type { ConstraintIndex } from '../index/constraint-index';
import { redactedReference, renderName, renderRemediation } from './constraint-rendering';
import { viewerForConstraint } from '../../model/name-visibility';
import { compareBySeverityThenName } from './ordering';
import { RevisionCache } from './revision-cache';
import { renderReadableLine } from '../../model/summary-rules';

/** The level each constraint is shown at (issue 24: `full` where the caller may read its source). */
export type LevelOfConstraint = (constraint: Constraint) => DetailLevel;

/**
 * The constraints of a namespace as the viewer may see them, sorted as every view sorts them. With
 * `viewerOf`, each constraint is rendered for its own viewer (per-constraint levels).
 */
export function sortedForViewer(
  constraints: readonly Constraint[],
  viewer: Viewer,
  viewerOf: (constraint: Constraint) => Viewer = () => viewer,
): Array<{ constraint: Constraint; name: string }> {
  return constraints
    .map((constraint) => ({
      constraint,
      name: renderName(constraint, viewerOf(constraint)),
      severity: constraint.severity,
      id: constraint.id,
    }))
    .sort(compareBySeverityThenName)
    .map(({ constraint, name }) => ({ constraint, name }));
}

/** One report entry; also used by the MCP `query` tool so its entries are exactly report entries. */
export function buildReportEntry(constraint: Constraint, name: string, baseViewer: Viewer): ReportEntry {
  const viewer = viewerForConstraint(constraint, baseViewer);
  return {
    name,
    ...redactedReference(constraint, viewer),
    summary: renderReadableLine(constraint.summary, viewer),
    type: constraint.type,
    severity: constraint.severity,
    effect: constraint.effect,
    source: constraint.source.kind,
    tags: [...constraint.tags],
    remediation: renderRemediation(constraint, viewer),
    detailLevel: viewer.level,
  };
}

/** Entries rendered each at its own level (never cached: the levels belong to one caller). */
function callerReportEntries(
  index: ConstraintIndex,
  namespace: string,
  levelOf: LevelOfConstraint,
): ReportEntry[] {
  const viewers = new Map<Constraint, Viewer>();
  const viewerOf = (constraint: Constraint): Viewer => {
    let viewer = viewers.get(constraint);
    if (!viewer) viewers.set(constraint, (viewer = { level: levelOf(constraint), namespace }));
    return viewer;
  };
  const constraints = index.constraintsForNamespace(namespace);
  return sortedForViewer(constraints, { level: 'summary', namespace }, viewerOf).map(({ constraint, name }) =>
    buildReportEntry(constraint, name, viewerOf(constraint)),
  );
}

const reportEntriesCache = new RevisionCache<readonly ReportEntry[]>();

/** The sorted entries of a namespace's report at a level, shared until the index changes. */
function reportEntries(
  index: ConstraintIndex,
  namespace: string,
  level: DetailLevel,
): readonly ReportEntry[] {
  return reportEntriesCache.get(index, `${level}/${namespace}`, () => {
    const viewer: Viewer = { level, namespace };
    return sortedForViewer(index.constraintsForNamespace(namespace), viewer).map(({ constraint, name }) =>
      buildReportEntry(constraint, name, viewer),
    );
  });
}

export function buildNamespaceReport(
  index: ConstraintIndex,
  namespace: string,
  level: DetailLevel,
  now: Date,
  levelOf?: LevelOfConstraint,
): Report {
  const entries: ReportEntry[] = levelOf
    ? callerReportEntries(index, namespace, levelOf)
    : [...reportEntries(index, namespace, level)];
  return {
    namespace,
    constraintCount: entries.length,
    criticalCount: entries.filter((entry) => entry.severity === 'Critical').length,
    warningCount: entries.filter((entry) => entry.severity === 'Warning').length,
    infoCount: entries.filter((entry) => entry.severity === 'Info').length,
    schemaVersion: SCHEMA_VERSION,
    detailLevel: level,
    generatedAt: now.toISOString(),
    constraints: entries,
  };
}
