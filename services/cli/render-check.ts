import type { CheckedObject, ManifestCheckReport } from '../controller/check/manifest-check';
import type { Style } from './output';

// Table output of `forewarn check`: per object, the warnings exactly as kubectl would print them,
// then the evidence of each violation and the constraints the object passes.

function objectTitle(object: CheckedObject): string {
  const name = object.namespace ? `${object.namespace}/${object.name}` : object.name;
  return `${object.kind} ${name}`;
}

function paintWarning(warning: string, style: Style): string {
  if (warning.startsWith('[CRITICAL]')) return style.severity('Critical', '[CRITICAL]') + warning.slice(10);
  if (warning.startsWith('[WARNING]')) return style.severity('Warning', '[WARNING]') + warning.slice(9);
  return warning;
}

/** Every failing field of each violation (the warning names only the first). */
function evidenceLines(object: CheckedObject, style: Style): string[] {
  return object.findings
    .filter((finding) => finding.verdict === 'violates' && (finding.evidence?.length ?? 0) > 0)
    .flatMap((finding) => [
      `    ${style.bold(`${finding.sourceKind} "${finding.name}"`)} fails on:`,
      ...(finding.evidence ?? []).map((item) => `      ${item.path}: ${item.message}`),
    ]);
}

/** What the cluster will do with the object, from the verdicts: rejected, warned, or admitted. */
function verdictLine(object: CheckedObject, style: Style): string {
  const violations = object.findings.filter((finding) => finding.verdict === 'violates');
  const rejecting = violations.filter((finding) => finding.severity === 'Critical').length;
  const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;
  if (rejecting > 0) return style.severity('Critical', `WILL BE REJECTED by ${plural(rejecting, 'rule')}`);
  if (violations.length > 0)
    return style.severity(
      'Warning',
      `admitted, but fails ${plural(violations.length, 'rule')} that warn or audit`,
    );
  if (object.passed.length > 0) return `passes the ${plural(object.passed.length, 'rule')} evaluated`;
  return 'no verdicts';
}

export function renderCheckTable(reports: readonly ManifestCheckReport[], style: Style): string {
  const lines: string[] = [];
  for (const report of reports) {
    const checked = report.objects.filter((object) => object.skipped === undefined).length;
    lines.push(
      style.bold(
        `${report.file}: ${checked} of ${report.objects.length} objects checked, ${report.criticalCount} critical, ${report.warningCount} warning${report.warningCount === 1 ? '' : 's'}`,
      ),
    );
    for (const object of report.objects) {
      if (object.skipped !== undefined) {
        lines.push(style.dim(`  ${objectTitle(object)}: skipped (${object.skipped})`));
        continue;
      }
      if (object.warnings.length === 0 && object.passed.length === 0) {
        lines.push(`  ${objectTitle(object)} (${object.resource}): no warnings`);
        continue;
      }
      lines.push(`  ${objectTitle(object)} (${object.resource}): ${verdictLine(object, style)}`);
      for (const warning of object.warnings) lines.push(`    ${paintWarning(warning, style)}`);
      lines.push(...evidenceLines(object, style));
      if (object.passed.length > 0)
        lines.push(
          `    ${style.dim('passed:')} ${object.passed.map((finding) => `${finding.sourceKind} "${finding.name}"`).join(', ')}`,
        );
    }
    lines.push('');
  }
  return lines.join('\n');
}
