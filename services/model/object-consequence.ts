import type { ConstraintType, Severity, VerdictName } from './api';

// Issue 31, "findings are about the object": what a constraint that applies will do to the object
// being admitted, from its verdict. The webhook's warnings, `forewarn check`'s header, groups and
// exit code and the MCP `check` tool all read a constraint through this, so they agree on what is a
// finding about the object and what is a standing rule of its namespace (docs/decisions.md).

/**
 * - `rejected`: the object (or its pods) will be refused.
 * - `warned`: admitted, but audited, warned about, or lacking a companion it needs.
 * - `unknown`: a rule about the object that could not be evaluated here.
 * - `standing`: a rule of the namespace that only applies (network, mesh, mutation, a webhook whose
 *   decision is its own): it passes or fails nothing about the object, so it is shown once per
 *   namespace and never counts as a finding.
 * - `passes`: evaluated, and the object meets it.
 */
export type ObjectConsequence = 'rejected' | 'warned' | 'unknown' | 'standing' | 'passes';

/** Types whose constraints never decide admission: they shape traffic to the object's pods. */
const TRAFFIC_TYPES: ReadonlySet<ConstraintType> = new Set(['NetworkIngress', 'NetworkEgress', 'MeshPolicy']);

export interface ConsequenceInput {
  severity: Severity;
  constraintType: ConstraintType;
  /** Absent from answers without verdicts (the label query of objects over 1 MiB, older controllers). */
  verdict?: VerdictName;
}

export function consequenceOf(constraint: ConsequenceInput): ObjectConsequence {
  switch (constraint.verdict) {
    case 'passes':
      return 'passes';
    case 'violates':
      // The controller makes a violation Critical exactly when its source denies (deny, limit).
      return constraint.severity === 'Critical' ? 'rejected' : 'warned';
    case 'unknown':
      return 'unknown';
    case 'applies':
      // A missing companion (a Secret, an issuer) is about this object: its pods will not start.
      return constraint.constraintType === 'MissingResource' ? 'warned' : 'standing';
    case undefined:
      // No verdict at all: traffic rules still only apply; anything else is not known.
      return TRAFFIC_TYPES.has(constraint.constraintType) ? 'standing' : 'unknown';
  }
}

/**
 * The severity of a constraint in the answer about one object, where the listed severity says what
 * the rule is to its namespace: a violation is Critical when its source denies, else Warning; a
 * rule not evaluated is at most a Warning (nothing says it rejects); a standing rule is Info, so the
 * webhook, which keeps Warning and Critical only (spec 4.5), does not repeat it on every apply.
 */
export function severityForObject(
  constraint: Pick<ConsequenceInput, 'severity' | 'constraintType'>,
  verdict: VerdictName,
  denies: boolean,
): Severity {
  const listed = constraint.severity;
  if (verdict === 'violates') return denies ? 'Critical' : 'Warning';
  // Only the two fields it reads: `constraint` is a whole listed constraint, and copying all of it
  // cost more than the rest of the admission check's rendering (issue 32).
  const consequence = consequenceOf({ severity: listed, constraintType: constraint.constraintType, verdict });
  if (consequence === 'standing') return 'Info';
  if (consequence === 'unknown' && listed === 'Critical') return 'Warning';
  return listed;
}
