import { severityRank, type Severity } from '../../model/api';

/** Reports and lists are sorted Critical, Warning, Info, then by name, then by a stable id. */
export function compareBySeverityThenName(
  left: { severity: Severity; name: string; id: string },
  right: { severity: Severity; name: string; id: string },
): number {
  return (
    severityRank(left.severity) - severityRank(right.severity) ||
    compareText(left.name, right.name) ||
    compareText(left.id, right.id)
  );
}

function compareText(left: string, right: string): number {
  if (left === right) return 0;
  return left < right ? -1 : 1;
}
