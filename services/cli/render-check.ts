import type {
  CheckedObject,
  CheckFinding,
  ManifestCheckReport,
  StandingConstraints,
} from '../controller/check/manifest-check';
import type { Severity } from '../model/api';
import { consequenceOf, type ObjectConsequence } from '../model/object-consequence';
import { singleLine } from '../model/warnings';
import { wrapText, type Style } from './output';

// Table output of `forewarn check`, for a person at a terminal: per object, what the cluster will do
// with it, then each finding once, grouped by consequence (will be rejected, audited or warned, not
// evaluated); after the objects, the constraints that only apply (network, mesh, webhooks that
// decide by themselves) once per namespace (issue 31), in full (the 256-character cut is the API server's, for warnings only)
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

function withConsequence(object: CheckedObject, consequence: ObjectConsequence): CheckFinding[] {
  return object.findings.filter((finding) => consequenceOf(finding) === consequence);
}

/** How many findings of the object count (Info ones, a dryrun not evaluated, are shown only). */
function countOf(object: CheckedObject, consequence: ObjectConsequence): number {
  return withConsequence(object, consequence).filter((finding) => finding.severity !== 'Info').length;
}

/** What the cluster will do with the object, from the verdicts: rejected, warned, or admitted. */
function verdictLine(object: CheckedObject, style: Style): string {
  const rejecting = countOf(object, 'rejected');
  const warned = countOf(object, 'warned');
  const unknown = countOf(object, 'unknown');
  const notEvaluated = unknown > 0 ? `; ${plural(unknown, 'rule')} not evaluated` : '';
  if (rejecting > 0) return style.severity('Critical', `WILL BE REJECTED by ${plural(rejecting, 'rule')}`);
  if (warned > 0)
    return style.severity(
      'Warning',
      `admitted, but fails ${warned === 1 ? '1 rule that warns or audits' : `${warned} rules that warn or audit`}${notEvaluated}`,
    );
  if (object.passed.length > 0)
    return `passes the ${plural(object.passed.length, 'rule')} evaluated${notEvaluated}`;
  if (unknown > 0) return style.severity('Warning', `${plural(unknown, 'rule')} not evaluated`);
  return 'no findings';
}

const GROUPS: ReadonlyArray<{ title: string; consequence: ObjectConsequence }> = [
  { title: 'will be rejected', consequence: 'rejected' },
  { title: 'will be audited or warned about', consequence: 'warned' },
  { title: 'not evaluated here (check them yourself)', consequence: 'unknown' },
];

/** The findings by consequence; each finding in exactly one group, in the check's order. */
function groupsOf(object: CheckedObject): FindingGroup[] {
  return GROUPS.map(({ title, consequence }) => ({
    title,
    findings: withConsequence(object, consequence),
  })).filter((group) => group.findings.length > 0);
}

const SEVERITY_LABEL: Partial<Record<Severity, string>> = { Critical: '[CRITICAL]', Warning: '[WARNING]' };

/** A finding's severity; a standing constraint's kind instead, as it is no finding about the object. */
function labelOf(finding: CheckFinding): string {
  if (consequenceOf(finding) === 'standing') {
    if (finding.effect === 'mutate') return '[mutation]';
    if (finding.constraintType === 'MeshPolicy') return '[mesh]';
    if (finding.constraintType === 'NetworkIngress' || finding.constraintType === 'NetworkEgress')
      return '[network]';
    if (finding.sourceKind.endsWith('WebhookConfiguration')) return '[webhook]';
    return '[applies]';
  }
  return SEVERITY_LABEL[finding.severity] ?? `[${finding.severity.toUpperCase()}]`;
}

/** One finding: its severity and summary, the remediation, then every failing field or why it was not evaluated. */
export function findingLines(
  finding: CheckFinding,
  width: number | undefined,
  style: Style,
  markFull = false,
): string[] {
  const summary = singleLine(finding.summary);
  const label = labelOf(finding);
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
  for (const same of finding.sameCause ?? [])
    detail(`same cause: ${singleLine(same.summary).split(': ', 1)[0]} (${singleLine(same.name)})`);
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
    return [`  ${title} (${object.resource}): no findings`];
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

function standingLines(standing: StandingConstraints, width: number | undefined, style: Style): string[] {
  const where = standing.namespace === '' ? 'cluster-wide' : `namespace ${standing.namespace}`;
  const count = standing.constraints.length;
  const title = `${where}: ${count === 1 ? '1 constraint that only applies' : `${count} constraints that only apply`} (nothing to pass or fail):`;
  const lines = wrapText(title, width, '  ', '    ').map(style.bold);
  for (const finding of standing.constraints)
    lines.push(...findingLines(finding, width, style).map((line) => line.slice(2)));
  return lines;
}

/** The header of one file: what will happen to its objects. */
function headerOf(report: ManifestCheckReport): string {
  const checked = report.objects.filter((object) => object.skipped === undefined).length;
  return (
    `${report.file}: ${checked} of ${plural(report.objects.length, 'object')} checked: ` +
    `${report.rejectionCount} will be rejected, ${report.auditedOrWarnedCount} audited or warned, ` +
    `${report.unknownCount} not evaluated`
  );
}

/** `width`: the terminal's columns to wrap at; undefined leaves lines whole (pipes, files). */
export function renderCheckTable(
  reports: readonly ManifestCheckReport[],
  style: Style,
  width?: number,
): string {
  const lines: string[] = [];
  for (const report of reports) {
    lines.push(...wrapText(headerOf(report), width, '', '  ').map(style.bold));
    for (const object of report.objects) lines.push(...objectLines(object, width, style));
    for (const standing of report.standing) lines.push(...standingLines(standing, width, style));
    lines.push('');
  }
  return lines.join('\n');
}
