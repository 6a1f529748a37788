import { SCHEMA_VERSION, type DetailLevel, type Report, type ReportEntry } from '../../model/api';
import type { Constraint } from '../../model/constraint';
import type { Viewer } from '../../model/text';
import type { ConstraintIndex } from '../index/constraint-index';
import { redactedReference, renderName, renderRemediation } from './constraint-rendering';
import { compareBySeverityThenName } from './ordering';
import { RevisionCache } from './revision-cache';
import { renderReadableLine } from '../../model/summary-rules';

/** The constraints of a namespace as the viewer may see them, sorted as every view sorts them. */
export function sortedForViewer(
  constraints: readonly Constraint[],
  viewer: Viewer,
): Array<{ constraint: Constraint; name: string }> {
  return constraints
    .map((constraint) => ({
      constraint,
      name: renderName(constraint, viewer),
      severity: constraint.severity,
      id: constraint.id,
    }))
    .sort(compareBySeverityThenName)
    .map(({ constraint, name }) => ({ constraint, name }));
}

/** One report entry; also used by the MCP `query` tool so its entries are exactly report entries. */
export function buildReportEntry(constraint: Constraint, name: string, viewer: Viewer): ReportEntry {
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
  };
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
): Report {
  const entries: ReportEntry[] = [...reportEntries(index, namespace, level)];
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
