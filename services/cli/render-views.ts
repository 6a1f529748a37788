import { isSeverity, type ConstraintView, type ReferencedConstraint, type Report } from '../model/api';
import { formatTable, type Style } from './output';

// Table output of `forewarn report` and `forewarn get`: what a person reads in a terminal. JSON and
// YAML output print the API's own body instead, so scripts never parse these.

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** `width`: the terminal's columns (`COLUMNS`, a TTY's width) to fit rows to; undefined: whole lines. */
export function renderReportTable(report: Report, style: Style, width?: number): string {
  const header = `Namespace ${style.bold(report.namespace)}: ${plural(report.constraintCount, 'constraint')} (${report.criticalCount} critical, ${report.warningCount} warning, ${report.infoCount} info), detail level ${report.detailLevel}\n`;
  if (report.constraints.length === 0) return `${header}No constraint applies to this namespace.\n`;
  const rows = report.constraints.map((entry) => [
    entry.severity,
    entry.type,
    // A redacted name with its opaque reference: what to quote to the platform team; an entry your
    // own RBAC let you read in full (issue 24) says so.
    (entry.ref ? `${entry.name} (${entry.ref})` : entry.name) +
      (entry.detailLevel !== report.detailLevel ? ` [${entry.detailLevel}]` : ''),
    entry.source,
    entry.effect,
    entry.remediation?.summary ?? '',
  ]);
  const table = formatTable(
    ['SEVERITY', 'TYPE', 'NAME', 'SOURCE', 'EFFECT', 'REMEDIATION'],
    rows,
    (row, column, text) => {
      const severity = report.constraints[row].severity;
      return column === 0 && isSeverity(severity) ? style.severity(severity, text) : text;
    },
    width,
  );
  return `${header}\n${table}`;
}

function field(label: string, value: string): string {
  return `${`${label}:`.padEnd(20)}${value}\n`;
}

export function renderConstraintTable(view: ConstraintView, style: Style): string {
  let text =
    field('Name', style.bold(view.name)) +
    field('Summary', view.summary) +
    field('Namespace', view.namespace) +
    field('Type', view.constraint_type) +
    field('Severity', style.severity(view.severity, view.severity)) +
    field('Effect', view.effect) +
    field('Source', `${view.source_kind} (${view.source_api_version})`) +
    field(
      'Affected workloads',
      view.affected_workloads.length > 0 ? view.affected_workloads.join(', ') : 'none',
    ) +
    field('Tags', view.tags.join(', ')) +
    field('Last observed', view.last_observed) +
    field('Detail level', view.detail_level) +
    field('Remediation', view.remediation.summary);
  view.remediation.steps.forEach((step, index) => {
    const extras = [
      step.requires_privilege ? `needs ${step.requires_privilege}` : undefined,
      step.contact ? `contact ${step.contact}` : undefined,
    ].filter((extra): extra is string => extra !== undefined);
    text += `  ${index + 1}. [${step.type}] ${step.description}${extras.length > 0 ? ` (${extras.join(', ')})` : ''}\n`;
    if (step.command) text += `     $ ${step.command}\n`;
  });
  if (view.metrics && Object.keys(view.metrics).length > 0) {
    const rows = Object.entries(view.metrics).map(([resource, metric]) => [
      resource,
      metric.used,
      metric.hard,
      metric.unit,
      `${metric.percent_used}%`,
    ]);
    const table = formatTable(['RESOURCE', 'USED', 'HARD', 'UNIT', 'USED %'], rows);
    text += `Metrics:\n${table.replace(/^/gm, '  ').trimEnd()}\n`;
  }
  return text;
}

/** `forewarn get --ref`: the constraint an opaque reference stands for, with how to see it in detail. */
export function renderReferenceTable(referenced: ReferencedConstraint, style: Style): string {
  const namespace = referenced.sourceNamespace;
  return (
    field('Reference', referenced.ref) +
    field('Name', style.bold(referenced.name)) +
    field('Summary', referenced.summary) +
    field('Type', referenced.constraintType) +
    field('Severity', style.severity(referenced.severity, referenced.severity)) +
    field('Effect', referenced.effect) +
    field(
      'Source',
      `${referenced.sourceKind} ${namespace ? `${namespace}/` : ''}${referenced.sourceName} (${referenced.sourceApiVersion})`,
    ) +
    field('Remediation', referenced.remediationHint) +
    (namespace
      ? `In detail:          forewarn get ${namespace} ${referenced.name}\n`
      : `In detail:          forewarn get <namespace> ${referenced.name} (any namespace it applies to)\n`)
  );
}
