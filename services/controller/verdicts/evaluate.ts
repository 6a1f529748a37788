import type { ConstraintDraft as Constraint } from '../../model/constraint';
import { detail, text } from '../../model/text';
import { evaluateAdmissionPolicy } from './admission-policy';
import { evaluateLimitRange } from './limit-range';
import { evaluateResourceQuota } from './resource-quota';
import {
  applies,
  NOT_APPLICABLE,
  unknown,
  type ConstraintEvaluator,
  type Verdict,
  type VerdictContext,
} from './types';

// The one evaluator shared by the webhook's admission check, `forewarn check` and the MCP `check`
// tool (DESIGN.md 7b): each constraint that applies to the admitted object gets a verdict. The
// evaluator is chosen by the constraint's source kind; kinds nothing here can judge faithfully are
// `applies` (they affect the object but pass or fail nothing: network, mesh, mutation) or
// `unknown` with the reason (Rego, opaque webhooks).

const EVALUATORS: Readonly<Record<string, ConstraintEvaluator>> = {
  ResourceQuota: evaluateResourceQuota,
  LimitRange: evaluateLimitRange,
  ValidatingAdmissionPolicyBinding: evaluateAdmissionPolicy,
};

function withoutEvaluator(constraint: Constraint): Verdict {
  if (constraint.effect === 'mutate') return applies();
  switch (constraint.adapter) {
    case 'webhookconfig':
      return unknown(
        text`an admission webhook decides at admission time; its rules cannot be evaluated here`,
      );
    case 'policyengine':
      return constraint.source.apiVersion.startsWith('constraints.gatekeeper.sh')
        ? unknown(text`Gatekeeper evaluates Rego; it is not evaluated here`)
        : unknown(text`this kind of policy is not evaluated here`);
    case 'admissionpolicy':
      return unknown(text`the ValidatingAdmissionPolicy could not be evaluated here`);
    default:
      // Network, mesh and companion constraints shape what the object may do, not whether it is admitted.
      return applies();
  }
}

export interface ConstraintVerdict {
  constraint: Constraint;
  verdict: Verdict;
}

/** Verdicts for the constraints that apply; those whose own match conditions exclude the object are dropped. */
export function evaluateVerdicts(
  constraints: readonly Constraint[],
  context: VerdictContext,
): ConstraintVerdict[] {
  const verdicts: ConstraintVerdict[] = [];
  for (const constraint of constraints) {
    const evaluator = EVALUATORS[constraint.source.kind] as ConstraintEvaluator | undefined;
    const source = evaluator ? context.index.sourceOf(constraint) : undefined;
    if (!evaluator || !source) {
      verdicts.push({ constraint, verdict: withoutEvaluator(constraint) });
      continue;
    }
    let outcome;
    try {
      outcome = evaluator(constraint, source, context);
    } catch (error) {
      // A rule this code cannot handle must never fail the check: it is reported as unknown.
      outcome = unknown(
        text`evaluation failed: ${detail(error instanceof Error ? error.message : String(error), 'an internal error')}`,
      );
    }
    if (outcome !== NOT_APPLICABLE) verdicts.push({ constraint, verdict: outcome });
  }
  return verdicts;
}
