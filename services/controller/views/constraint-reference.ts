import type { ReferencedConstraint } from '../../model/api';
import type { Constraint } from '../../model/constraint';
import type { Viewer } from '../../model/text';
import { renderReadableLine } from '../../model/summary-rules';

// `GET /resources/references/{ref}`: what a redacted name's opaque reference stands for, for a caller
// entitled to the `full` level (the route refuses any other). Rendered at `full`, as the source's own
// namespace sees it; `forewarn get <namespace> <name>` then shows it in detail.

export function buildReferencedConstraint(constraint: Constraint, ref: string): ReferencedConstraint {
  const viewer: Viewer = { level: 'full', namespace: constraint.source.namespace ?? '' };
  return {
    ref,
    name: constraint.name,
    constraintType: constraint.type,
    severity: constraint.severity,
    effect: constraint.effect,
    summary: renderReadableLine(constraint.summary, viewer),
    remediationHint: renderReadableLine(constraint.remediationHint, viewer),
    sourceKind: constraint.source.kind,
    sourceApiVersion: constraint.source.apiVersion,
    sourceName: constraint.source.name,
    sourceNamespace: constraint.source.namespace,
  };
}
