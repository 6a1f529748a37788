import type { CheckedObject, CheckFinding, ManifestCheckReport } from '../controller/check/manifest-check';
import type { Severity } from '../model/api';
import { singleLine } from '../model/warnings';
import { wrapText, type Style } from './output';

// Table output of `forewarn check`, for a person at a terminal: per object, what the cluster will do
// with it, then each finding once, grouped by consequence (will be rejected, audited or warned, other
// constraints that apply), in full (the 256-character cut is the API server's, for warnings only)
// with its remediation and the fields that fail under it, wrapped to the terminal's width. JSON and
// YAML keep the admission warnings exactly as the webhook returns them.

/** Where the text of a finding starts, below the object's line. */
const FINDING_INDENT = '      ';
/** Remediation, evidence and reasons, under their finding. */
const DETAIL_INDENT = '        ';

interface FindingGroup {
  title: string;
  findings: CheckFinding[];
}

function objectTitle(object: CheckedObject): string {
  const name = object.namespace ? `${object.namespace}/${object.name}` : object.name;
  return `${object.kind} ${name}`;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** What the cluster will do with the object, from the verdicts: rejected, warned, or admitted. */
function verdictLine(object: CheckedObject, style: Style): string {
  const violations = object.findings.filter((finding) => finding.verdict === 'violates');
  const rejecting = violations.filter((finding) => finding.severity === 'Critical').length;
  if (rejecting > 0) return style.severity('Critical', `WILL BE REJECTED by ${plural(rejecting, 'rule')}`);
  if (violations.length > 0)
    return style.severity(
      'Warning',
      `admitted, but fails ${plural(violations.length, 'rule')} that warn or audit`,
    );
  if (object.passed.length > 0) return `passes the ${plural(object.passed.length, 'rule')} evaluated`;
  return 'no verdicts';
}

/** The findings by consequence; each finding in exactly one group, in the check's order. */
function groupsOf(object: CheckedObject): FindingGroup[] {
  const violates = (finding: CheckFinding) => finding.verdict === 'violates';
  return [
    {
      title: 'will be rejected',
      findings: object.findings.filter((finding) => violates(finding) && finding.severity === 'Critical'),
    },
    {
      title: 'will be audited or warned about',
      findings: object.findings.filter((finding) => violates(finding) && finding.severity !== 'Critical'),
    },
    {
      title: 'other constraints that apply',
      findings: object.findings.filter((finding) => !violates(finding)),
    },
  ].filter((group) => group.findings.length > 0);
}

const SEVERITY_LABEL: Partial<Record<Severity, string>> = { Critical: '[CRITICAL]', Warning: '[WARNING]' };

/** One finding: its severity and summary, the remediation, then every failing field or why it was not evaluated. */
export function findingLines(
  finding: CheckFinding,
  width: number | undefined,
  style: Style,
  markFull = false,
): string[] {
  const summary = singleLine(finding.summary);
  const label = SEVERITY_LABEL[finding.severity] ?? `[${finding.severity.toUpperCase()}]`;
  // A redacted name's opaque reference: what to quote to the platform team (`forewarn get --ref`).
  const reference = finding.ref ? `(ref ${singleLine(finding.ref)}) ` : '';
  // Shown in full because your own RBAC lets you read its source (`--as-me`), among others that are not.
  const level = markFull && finding.detailLevel === 'full' ? '[full] ' : '';
  const [first = '', ...rest] = wrapText(
    `${label} ${level}${reference}${summary}`,
    width,
    FINDING_INDENT,
    DETAIL_INDENT,
  );
  // The label is painted after wrapping, so escape codes never count towards the width.
  const lines = [first.replace(label, style.severity(finding.severity, label)), ...rest];
  const detail = (text: string) => lines.push(...wrapText(text, width, DETAIL_INDENT, `${DETAIL_INDENT}  `));
  const hint = singleLine(finding.remediationHint);
  if (hint) detail(`fix: ${hint}`);
  const evidence = finding.evidence ?? [];
  for (const item of evidence) {
    const message = singleLine(item.message);
    // The summary already quotes the first failing field's message: the path is what it lacks.
    const quoted = evidence.length === 1 && summary.includes(message);
    // An empty path is the object as a whole (a Gatekeeper message that names no field).
    if (item.path === '') {
      if (!quoted) detail(message);
    } else detail(quoted ? `at ${item.path}` : `at ${item.path}: ${message}`);
  }
  if (finding.verdict === 'unknown' && finding.reason)
    lines.push(
      ...wrapText(`not evaluated: ${singleLine(finding.reason)}`, width, DETAIL_INDENT).map(style.dim),
    );
  return lines;
}

export function objectLines(object: CheckedObject, width: number | undefined, style: Style): string[] {
  const title = objectTitle(object);
  if (object.skipped !== undefined)
    return wrapText(`${title}: skipped (${object.skipped})`, width, '  ', '    ').map(style.dim);
  if (object.findings.length === 0 && object.passed.length === 0)
    return [`  ${title} (${object.resource}): no warnings`];
  const lines = [`  ${title} (${object.resource}): ${verdictLine(object, style)}`];
  // Levels differ only where a caller's RBAC raised some findings to `full` (issue 24): mark those.
  const mixedLevels = new Set(object.findings.map((finding) => finding.detailLevel)).size > 1;
  for (const group of groupsOf(object)) {
    lines.push(`    ${style.bold(`${group.title} (${group.findings.length}):`)}`);
    for (const finding of group.findings) lines.push(...findingLines(finding, width, style, mixedLevels));
  }
  if (object.passed.length > 0) {
    const passed = object.passed.map((finding) => `${finding.sourceKind} "${finding.name}"`).join(', ');
    const [first = '', ...rest] = wrapText(`passed: ${passed}`, width, '    ', '      ');
    lines.push(first.replace('passed:', style.dim('passed:')), ...rest);
  }
  return lines;
}

/** `width`: the terminal's columns to wrap at; undefined leaves lines whole (pipes, files). */
export function renderCheckTable(
  reports: readonly ManifestCheckReport[],
  style: Style,
  width?: number,
): string {
  const lines: string[] = [];
  for (const report of reports) {
    const checked = report.objects.filter((object) => object.skipped === undefined).length;
    lines.push(
      style.bold(
        `${report.file}: ${checked} of ${plural(report.objects.length, 'object')} checked, ${report.criticalCount} critical, ${plural(report.warningCount, 'warning')}`,
      ),
    );
    for (const object of report.objects) lines.push(...objectLines(object, width, style));
    lines.push('');
  }
  return lines.join('\n');
}
