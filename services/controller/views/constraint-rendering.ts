import type { Metrics, Remediation, RemediationStep } from '../../model/api';
import type { Constraint, ResourceTarget } from '../../model/constraint';
import {
  isNamePart,
  isNamePartVisible,
  REDACTED,
  renderText,
  type Text,
  type Viewer,
} from '../../model/text';
import { isConstraintNameVisible, viewerForConstraint } from '../../model/name-visibility';
import { matchesSelector } from '../../model/selector';
import { pluralOfKind, targetsInclude } from '../../model/resources';
import { workloadKindNamed } from '../../model/workload-kinds';
import type { WorkloadRecord } from '../index/constraint-index';
import { renderReadableLine } from '../../model/summary-rules';

// Rendering of one constraint's parts for a viewer: shared by the report, the single-constraint
// view and the MCP tools so every surface applies the same privacy rules.

export function renderName(constraint: Constraint, viewer: Viewer): string {
  return isConstraintNameVisible(constraint, viewer) ? constraint.name : REDACTED;
}

/** `{ref}` where the viewer sees `redacted` instead of the name: the handle to tell it apart and quote it. */
export function redactedReference(
  constraint: Pick<Constraint, 'source' | 'ref' | 'effect'>,
  viewer: Viewer,
): { ref?: string } {
  return constraint.ref === undefined || isConstraintNameVisible(constraint, viewer)
    ? {}
    : { ref: constraint.ref };
}

/** Whether every name a command holds is shown to the viewer: otherwise the command cannot work. */
function isRunnable(command: Text, viewer: Viewer): boolean {
  return command.every((part) => !isNamePart(part) || isNamePartVisible(part, viewer));
}

/**
 * The remediation as the viewer may read it. A command that needs a name the viewer does not see
 * (`kubectl get validatingadmissionpolicy redacted -o yaml`) cannot work: it becomes a manual step
 * saying whom to ask, never an `automated` command (DESIGN.md 4).
 */
export function renderRemediation(constraint: Constraint, baseViewer: Viewer): Remediation {
  const viewer = viewerForConstraint(constraint, baseViewer);
  // Read once: the index fills an indexed constraint's texts from a template on every read.
  const remediation = constraint.remediation;
  const contact = remediation.steps.find((step) => step.contact !== undefined)?.contact;
  return {
    summary: renderReadableLine(remediation.summary, viewer),
    steps: remediation.steps.map((step) => {
      const description = renderReadableLine(step.description, viewer);
      if (step.command !== undefined && !isRunnable(step.command, viewer))
        return {
          type: 'manual',
          description: `${description} (the command needs a name hidden at this detail level: ask ${contact ?? 'the cluster administrators'}, or a caller entitled to full detail, to run it)`,
          ...(contact === undefined ? {} : { contact }),
          ...(step.requiresPrivilege === undefined ? {} : { requires_privilege: step.requiresPrivilege }),
          automated: false,
        };
      const rendered: RemediationStep = { type: step.type, description };
      if (step.contact !== undefined) rendered.contact = step.contact;
      if (step.command !== undefined) rendered.command = renderText(step.command, viewer);
      if (step.requiresPrivilege !== undefined) rendered.requires_privilege = step.requiresPrivilege;
      if (step.automated !== undefined) rendered.automated = step.automated;
      return rendered;
    }),
  };
}

/** Usage figures are details: hidden at `summary`, and only ResourceLimit constraints have them. */
export function renderMetrics(constraint: Constraint, viewer: Viewer): Metrics | null {
  if (constraint.type !== 'ResourceLimit' || !constraint.metrics || viewer.level === 'summary') return null;
  return structuredClone(constraint.metrics);
}

function resourceOfWorkload(kind: string): ResourceTarget {
  const entry = workloadKindNamed(kind);
  return entry ? { group: entry.group, resource: entry.plural } : { group: '', resource: pluralOfKind(kind) };
}

/**
 * Workloads of the namespace a constraint affects: their pods match its workload selector, and it
 * intercepts pods or the workload's own kind (an admission rule on ingresses affects no workload).
 */
export function affectedWorkloads(constraint: Constraint, workloads: readonly WorkloadRecord[]): string[] {
  return workloads
    .filter(
      (workload) =>
        (constraint.workloadSelector === undefined ||
          matchesSelector(constraint.workloadSelector, workload.podLabels, workload.namespace)) &&
        (targetsInclude(constraint.resourceTargets, { group: '', resource: 'pods' }) ||
          targetsInclude(constraint.resourceTargets, resourceOfWorkload(workload.kind))),
    )
    .map((workload) => workload.name)
    .sort();
}
