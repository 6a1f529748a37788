import type { ConstraintDraft as Constraint } from '../../model/constraint';
import { detail, text } from '../../model/text';
import { evaluateAdmissionPolicy } from './admission-policy';
import { evaluateKyvernoRule } from './kyverno/kyverno-rule';
import { evaluateValidatingPolicy } from './kyverno/validating-policy';
import { evaluateLimitRange } from './limit-range';
import { evaluateLinkerdDefaultInbound } from './linkerd-default-inbound';
import { LINKERD_DEFAULT_INBOUND_CONSTRAINT } from '../../model/linkerd';
import { evaluatePodSecurityAdmission } from './pod-security-admission';
import { evaluateGatekeeperConstraint } from './gatekeeper/gatekeeper-constraint';
import { GATEKEEPER_CONSTRAINT_GROUP } from '../../model/gatekeeper';
import { groupOf } from '../../model/kubernetes';
import { withFields } from '../../model/object-copy';
import { evaluateResourceQuota } from './resource-quota';
import {
  DEFAULT_EVALUATION_LIMITS,
  EvaluationAborted,
  EvaluationGuard,
  underGuard,
  type EvaluationLimits,
} from './guard/evaluation-guard';
import {
  applies,
  NOT_APPLICABLE,
  unknown,
  type ConstraintEvaluator,
  type Verdict,
  type VerdictContext,
  type VerdictOutcome,
} from './types';

// The one evaluator shared by the webhook's admission check, `forewarn check` and the MCP `check`
// tool (DESIGN.md 7b): each constraint that applies to the admitted object gets a verdict. The
// evaluator is chosen by the constraint's source kind (Pod Security Admission by its adapter: its source,
// the Namespace, also yields other adapters' constraints, Linkerd's for one); kinds with nothing to
// judge are `applies` with the reason (network, mesh, mutation, opaque webhooks: they affect the
// object but pass or fail nothing), rules that cannot be judged faithfully here `unknown`.

const EVALUATORS: Readonly<Record<string, ConstraintEvaluator>> = {
  ResourceQuota: evaluateResourceQuota,
  LimitRange: evaluateLimitRange,
  ValidatingAdmissionPolicyBinding: evaluateAdmissionPolicy,
  ClusterPolicy: evaluateKyvernoRule,
  Policy: evaluateKyvernoRule,
  ValidatingPolicy: evaluateValidatingPolicy,
};

// Reasons of the constraints with nothing to evaluate: the same for every admission, made once.
const WITHOUT_EVALUATOR_REASONS = {
  MUTATION: text`nothing to evaluate: a mutation changes the object on admission, it passes or fails nothing`,
  OPAQUE_WEBHOOK: text`nothing to evaluate: the admission webhook decides at request time, with rules only it knows`,
  GATEKEEPER_NOT_INDEXED: text`the Gatekeeper constraint is not in the index`,
  POLICY_KIND_NOT_EVALUATED: text`this kind of policy is not evaluated here`,
  ADMISSION_POLICY_NOT_EVALUATED: text`the ValidatingAdmissionPolicy could not be evaluated here`,
  NETWORK: text`nothing to evaluate: a network policy decides which traffic reaches the object's pods, not whether the object is admitted`,
  MESH: text`nothing to evaluate: a mesh policy decides which requests reach the object's pods, not whether the object is admitted`,
  MISSING_RESOURCE: text`nothing to evaluate: it names a companion resource the object needs, not a rule the object passes or fails`,
  SOURCE_NOT_INDEXED: text`its source object is not in the index, so it is not evaluated here`,
} as const;

/**
 * Constraints with nothing here to pass or fail: they affect the object, so they are `applies`, and
 * the reason says why there is nothing to evaluate (DESIGN.md 7b), so that a reader does not take the
 * verdict for a gap. Only rules that exist but cannot be evaluated faithfully here are `unknown`.
 */
function withoutEvaluator(constraint: Constraint): Verdict {
  if (constraint.effect === 'mutate') return applies(WITHOUT_EVALUATOR_REASONS.MUTATION);
  switch (constraint.adapter) {
    case 'webhookconfig':
      return applies(WITHOUT_EVALUATOR_REASONS.OPAQUE_WEBHOOK);
    case 'policyengine':
      return groupOf(constraint.source.apiVersion) === GATEKEEPER_CONSTRAINT_GROUP
        ? unknown(WITHOUT_EVALUATOR_REASONS.GATEKEEPER_NOT_INDEXED)
        : unknown(WITHOUT_EVALUATOR_REASONS.POLICY_KIND_NOT_EVALUATED);
    case 'admissionpolicy':
      return unknown(WITHOUT_EVALUATOR_REASONS.ADMISSION_POLICY_NOT_EVALUATED);
    case 'networkpolicy':
    case 'adminnetworkpolicy':
    case 'cni':
      return applies(WITHOUT_EVALUATOR_REASONS.NETWORK);
    case 'mesh':
      return applies(WITHOUT_EVALUATOR_REASONS.MESH);
    case 'missingresource':
      return applies(WITHOUT_EVALUATOR_REASONS.MISSING_RESOURCE);
    case 'resourcequota':
    case 'limitrange':
    case 'podsecurity':
      // Evaluated when their source is in the index; without it there is nothing to measure against.
      return unknown(WITHOUT_EVALUATOR_REASONS.SOURCE_NOT_INDEXED);
  }
}

function verdictOf(constraint: Constraint, context: VerdictContext): VerdictOutcome {
  // Its tags carry the level and version that apply: no source object is needed.
  if (constraint.adapter === 'podsecurity') return evaluatePodSecurityAdmission(constraint, context);
  // A namespace default that a pod's own annotation replaces.
  if (constraint.adapter === 'mesh' && constraint.name === LINKERD_DEFAULT_INBOUND_CONSTRAINT)
    return evaluateLinkerdDefaultInbound(constraint, context);
  // Gatekeeper: one kind per template, so the evaluator is chosen by group.
  const evaluator =
    constraint.adapter === 'policyengine' &&
    groupOf(constraint.source.apiVersion) === GATEKEEPER_CONSTRAINT_GROUP
      ? evaluateGatekeeperConstraint
      : (EVALUATORS[constraint.source.kind] as ConstraintEvaluator | undefined);
  const source = evaluator ? context.index.sourceOf(constraint) : undefined;
  if (!evaluator || !source) return withoutEvaluator(constraint);
  return evaluator(constraint, source, context);
}

export interface ConstraintVerdict {
  constraint: Constraint;
  verdict: Verdict;
}

/**
 * Verdicts for the constraints that apply; those whose own match conditions exclude the object are
 * dropped. All of them run under one guard (guard/evaluation-guard.ts): once it stops an evaluation,
 * that constraint and every one after it are `unknown` with the guard's reason, and the answer still
 * comes back.
 */
export function evaluateVerdicts(
  constraints: readonly Constraint[],
  context: Omit<VerdictContext, 'guard'> & { guard?: EvaluationGuard },
  limits: EvaluationLimits = DEFAULT_EVALUATION_LIMITS,
): ConstraintVerdict[] {
  // A guard given by the caller has already counted the object's preparation (defaulting).
  const guarded: VerdictContext = withFields(context, {
    guard: context.guard ?? new EvaluationGuard(limits),
    constraints,
  });
  return underGuard(guarded.guard, () => verdictsUnderGuard(constraints, guarded));
}

function verdictsUnderGuard(
  constraints: readonly Constraint[],
  guarded: VerdictContext,
): ConstraintVerdict[] {
  const verdicts: ConstraintVerdict[] = [];
  let stopped: EvaluationAborted | undefined;
  let first = true;
  for (const constraint of constraints) {
    let outcome;
    try {
      if (stopped) throw stopped;
      if (first) guarded.guard.checkDeadline();
      first = false;
      outcome = verdictOf(constraint, guarded);
    } catch (error) {
      if (error instanceof EvaluationAborted) {
        stopped = error;
        verdicts.push({
          constraint,
          verdict: withFields(unknown(text`${error.message}`), { stoppedBy: error.reasonCause }),
        });
        continue;
      }
      // A rule this code cannot handle must never fail the check: it is reported as unknown.
      outcome = unknown(
        text`evaluation failed: ${detail(error instanceof Error ? error.message : String(error), 'an internal error')}`,
      );
    }
    if (outcome !== NOT_APPLICABLE) verdicts.push({ constraint, verdict: outcome });
  }
  return verdicts;
}
