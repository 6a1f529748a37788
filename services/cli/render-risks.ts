import type { CheckedConstraint } from '../model/api';
import type { CheckedObject } from '../controller/check/manifest-check';
import type { ImpactChange, ImpactedWorkload, ImpactReport } from '../controller/risks/impact';
import type { RisksReport, RiskWorkloadEntry } from '../controller/risks/risk-view';
import { pluralOfKind } from '../model/resources';
import { findingLines, objectLines } from './render-check';
import { wrapText, type Style } from './output';

// Table output of `forewarn risks` and `forewarn impact` (issue 35): each workload as `check` shows
// an object (its verdict line, then its findings grouped by consequence, with the fix and the failing
// fields), under its namespace; `impact` says first what would change for the workload.

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

function resourceOf(kind: string, apiVersion: string): string {
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const resource = pluralOfKind(kind);
  return group === '' ? resource : `${group}/${resource}`;
}

function ownerSuffix(workload: { owner?: { kind: string; name: string } }): string {
  return workload.owner ? `, owned by ${workload.owner.kind} ${workload.owner.name}` : '';
}

/** A workload as `check` renders an object it checked. */
function asCheckedObject(workload: RiskWorkloadEntry): CheckedObject {
  return {
    kind: workload.kind,
    apiVersion: workload.apiVersion,
    name: workload.name,
    namespace: workload.namespace,
    resource: `${resourceOf(workload.kind, workload.apiVersion)}${ownerSuffix(workload)}`,
    warnings: [],
    findings: workload.findings,
    passed: [],
  };
}

export function renderRisksTable(reports: readonly RisksReport[], style: Style, width?: number): string {
  const lines: string[] = [];
  for (const report of reports) {
    const state = report.evaluated ? '' : ' (first evaluation still running)';
    lines.push(
      style.bold(
        `namespace ${report.namespace}: ${plural(report.atRiskCount, 'workload')} would be rejected, ${report.warnedCount} warned on their next apply${state}`,
      ),
    );
    for (const workload of report.workloads)
      lines.push(...objectLines(asCheckedObject(workload), width, style));
    lines.push('');
  }
  return lines.join('\n');
}

const CHANGE_TITLES: Record<ImpactChange, string> = {
  'newly-rejected': 'WOULD BE REJECTED',
  'newly-warned': 'would be warned about',
  'no-longer-rejected': 'would no longer be rejected',
};

function impactedLines(workload: ImpactedWorkload, width: number | undefined, style: Style): string[] {
  const title = `${workload.kind} ${workload.namespace}/${workload.name} (${resourceOf(workload.kind, workload.apiVersion)}${ownerSuffix(workload)})`;
  const change = CHANGE_TITLES[workload.change];
  const painted =
    workload.change === 'newly-rejected'
      ? style.severity('Critical', change)
      : workload.change === 'newly-warned'
        ? style.severity('Warning', change)
        : change;
  const lines = [`  ${title}: ${painted}`];
  const findings: CheckedConstraint[] = workload.findings;
  if (workload.change === 'no-longer-rejected') {
    const names = findings.map((finding) => `${finding.sourceKind} "${finding.name}"`).join(', ');
    lines.push(...wrapText(`was rejected by: ${names}`, width, '    ', '      ').map(style.dim));
    return lines;
  }
  for (const finding of findings) lines.push(...findingLines(finding, width, style));
  return lines;
}

export function renderImpactTable(report: ImpactReport, style: Style, width?: number): string {
  const lines: string[] = [];
  for (const proposed of report.proposed) {
    const name = proposed.namespace ? `${proposed.namespace}/${proposed.name}` : proposed.name;
    const what = proposed.problem
      ? `not evaluated: ${proposed.problem}`
      : `${proposed.replaces ? 'replaces the one in the cluster' : 'new'}, ${plural(proposed.constraintCount, 'constraint')}`;
    lines.push(...wrapText(`${proposed.kind} ${name}: ${what}`, width, '', '  '));
  }
  lines.push(
    style.bold(
      `${plural(report.evaluatedWorkloads, 'workload')} evaluated: ${report.newlyRejectedCount} newly rejected, ${report.newlyWarnedCount} newly warned, ${report.noLongerRejectedCount} no longer rejected`,
    ),
  );
  if (report.incomplete)
    lines.push(
      ...wrapText(
        `${plural(report.unevaluatedWorkloads ?? 0, 'workload')} not evaluated: ${report.incomplete}`,
        width,
        '',
        '  ',
      ),
    );
  for (const { namespace, workloads } of report.namespaces) {
    lines.push(`namespace ${namespace}:`);
    for (const workload of workloads) lines.push(...impactedLines(workload, width, style));
  }
  lines.push('');
  return lines.join('\n');
}
