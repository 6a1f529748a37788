import type { CheckedObject, CheckFinding, ManifestCheckReport } from '../controller/check/manifest-check';
import { singleLine } from '../model/warnings';
import { manifestLocations, type ManifestLocations } from './manifest-locations';

// What the CI formats (`check -o sarif|junit|github`) share: each finding of a check with the file
// and line of its object (or of its first failing field), a level from its verdict, and the text a
// reviewer reads: the summary, the fix and the failing fields, as the table shows them.

/** SARIF's levels, which GitHub annotations share (`notice` there for `note`). */
export type FindingLevel = 'error' | 'warning' | 'note';

/**
 * From the verdict (docs/decisions.md, CI formats): what the cluster will reject is an error, a
 * violation that is only warned about or audited a warning, a constraint that applies without a
 * verdict on the object a note. A controller without verdicts: by severity, as its warnings.
 */
export function findingLevel(finding: CheckFinding): FindingLevel {
  if (finding.verdict === 'violates' || finding.verdict === undefined)
    return finding.severity === 'Critical' ? 'error' : 'warning';
  return 'note';
}

/** One constraint across objects: its opaque reference when its name is redacted. */
export function constraintId(finding: CheckFinding): string {
  return finding.ref ?? `${finding.sourceKind}/${finding.name}`;
}

export function objectLabel(object: CheckedObject): string {
  return `${object.kind} ${object.namespace ? `${object.namespace}/` : ''}${object.name}`;
}

/** The finding in the table's words: summary, `fix:`, then `at <path>: message` per failing field. */
export function findingText(finding: CheckFinding): string {
  const summary = singleLine(finding.summary);
  const lines = [summary];
  const hint = singleLine(finding.remediationHint);
  if (hint) lines.push(`fix: ${hint}`);
  const evidence = finding.evidence ?? [];
  for (const item of evidence) {
    const message = singleLine(item.message);
    // As the table (render-check.ts): a lone failing field whose message the summary quotes shows its path only.
    const quoted = evidence.length === 1 && summary.includes(message);
    if (item.path === '') {
      if (!quoted) lines.push(message);
    } else lines.push(quoted ? `at ${item.path}` : `at ${item.path}: ${message}`);
  }
  if (finding.verdict === 'unknown' && finding.reason)
    lines.push(`not evaluated: ${singleLine(finding.reason)}`);
  return lines.join('\n');
}

export interface LocatedFinding {
  file: string;
  /** 1-based: the first failing field's line, else the object's. */
  line: number;
  object: CheckedObject;
  finding: CheckFinding;
  level: FindingLevel;
}

/** Every finding of the reports, in report order, with its line in `contents` (file → text). */
export function locateFindings(
  reports: readonly ManifestCheckReport[],
  contents: ReadonlyMap<string, string>,
): LocatedFinding[] {
  const located: LocatedFinding[] = [];
  for (const report of reports) {
    let locations: ManifestLocations | undefined;
    const locationsOf = () => (locations ??= manifestLocations(contents.get(report.file) ?? ''));
    report.objects.forEach((object, position) => {
      for (const finding of object.findings) {
        const fieldPath = finding.evidence?.find((item) => item.path !== '')?.path;
        located.push({
          file: report.file,
          line: locationsOf().lineOf(object, position, fieldPath),
          object,
          finding,
          level: findingLevel(finding),
        });
      }
    });
  }
  return located;
}
