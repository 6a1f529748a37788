import type { ConstraintDraft as Constraint } from '../../model/constraint';
import { groupOf, isRecord, versionOf, type KubernetesObject } from '../../model/kubernetes';
import { pluralOfKind } from '../../model/resources';
import { withFields } from '../../model/object-copy';
import { detail, objectName, text, type Text } from '../../model/text';
import { admittedAsCelInput, objectAsCelInput, toCelInput } from './cel/cel-program';
import { factOfEvaluation } from './evaluation-memo';
import {
  CelCostExceeded,
  RUNTIME_CEL_COST_BUDGET,
  RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS,
} from './cel/runtime-cost';
import {
  compilePolicy,
  firstReferencePath,
  type CompiledPolicy,
  type CompiledValidation,
  type IterationShape,
} from './cel/compiled-policy';
import {
  NOT_APPLICABLE,
  unknown,
  type Evidence,
  type Verdict,
  type VerdictContext,
  type VerdictOutcome,
} from './types';
import { noParamsReason, resolveParams } from './admission-params';
import { PolicyRun, type Bindings } from './policy-run';

export { PolicyRun, type Bindings } from './policy-run';

// ValidatingAdmissionPolicy as the API server evaluates it for one binding: matchConditions (all
// true, else the policy does not apply), variables, validations with message / messageExpression /
// reason, params when the index holds them, failurePolicy for expressions that fail to evaluate.
// `unknown` when an expression needs who is asking (request.userInfo, authorizer), params the index
// lacks, or a CEL function not implemented here (cel/kubernetes-extensions.ts).

const POLICY_GROUP = 'admissionregistration.k8s.io';
export const NEEDS_REQUESTER = /\brequest\.userInfo\b|\bauthorizer\b/;

const requesterNeeded = new WeakMap<CompiledPolicy, boolean>();

/** Whether an expression of the policy reads who makes the request; decided once per compiled policy. */
export function needsRequester(compiledPolicy: CompiledPolicy): boolean {
  let needed = requesterNeeded.get(compiledPolicy);
  if (needed === undefined) {
    needed = compiledPolicy.sources.some((source) => NEEDS_REQUESTER.test(source));
    requesterNeeded.set(compiledPolicy, needed);
  }
  return needed;
}

// Whether each operation passes the policy's resource rules: read once per policy revision (the
// index keeps one object per revision), not once per admission check.
const allowedOperations = new WeakMap<KubernetesObject, Map<string, boolean>>();

function operationsAllow(policy: KubernetesObject, operation: string): boolean {
  let byOperation = allowedOperations.get(policy);
  if (!byOperation) allowedOperations.set(policy, (byOperation = new Map()));
  let allowed = byOperation.get(operation);
  if (allowed === undefined) {
    const spec = isRecord(policy.spec) ? policy.spec : {};
    const constraints = isRecord(spec.matchConstraints) ? spec.matchConstraints : {};
    const rules = Array.isArray(constraints.resourceRules) ? constraints.resourceRules.filter(isRecord) : [];
    allowed =
      rules.length === 0 ||
      rules.some(
        (rule) =>
          !Array.isArray(rule.operations) ||
          rule.operations.includes('*') ||
          rule.operations.includes(operation),
      );
    byOperation.set(operation, allowed);
  }
  return allowed;
}

export function requestOf(context: VerdictContext): Record<string, unknown> {
  const { object, operation, namespace } = context.admitted;
  const group = groupOf(object.apiVersion);
  const version = versionOf(object.apiVersion);
  return {
    operation,
    namespace,
    name: object.metadata?.name ?? '',
    kind: { group, version, kind: object.kind ?? '' },
    resource: { group, version, resource: pluralOfKind(object.kind ?? '') },
    dryRun: false,
  };
}

/**
 * `request` as CEL input: the same for every CEL policy and Gatekeeper template evaluated on this
 * object, so converted once per evaluation.
 */
export function celRequestOf(context: VerdictContext): unknown {
  return factOfEvaluation(context.guard, 'cel-request', context.admitted, () =>
    toCelInput(requestOf(context)),
  );
}

function messageOf(validation: CompiledValidation, run: PolicyRun): string {
  if (validation.messageExpression) {
    const result = run.evaluate(
      validation.messageExpression.program,
      validation.messageExpression.expression,
    );
    if (result.ok && typeof result.value === 'string' && result.value.trim() !== '') return result.value;
  }
  return validation.message ?? `failed expression: ${validation.expression}`;
}

// `container` for `spec.template.spec.containers`: once per compiled validation, not per element.
const singulars = new WeakMap<IterationShape, string>();

function singularOf(iteration: IterationShape): string {
  let singular = singulars.get(iteration);
  if (singular === undefined) {
    const field = iteration.listPath.slice(iteration.listPath.lastIndexOf('.') + 1);
    singular = field
      .replace(/ies$/, 'y')
      .replace(/s$/, '')
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .toLowerCase();
    singulars.set(iteration, singular);
  }
  return singular;
}

function elementLabel(iteration: IterationShape, element: unknown, index: number): string {
  const singular = singularOf(iteration);
  const name = isRecord(element) && typeof element.name === 'string' ? element.name : undefined;
  return name === undefined ? `${singular} #${index}` : `${singular} "${name}"`;
}

/** What the policy says about a failing element or object: its message, or the evaluation error. */
type Failure = { message: string } | { error: string };

function failureText(failure: Failure): Text {
  return 'message' in failure
    ? [detail(failure.message, 'it fails a rule of the policy')]
    : text`a validation cannot be evaluated on it (${detail(failure.error, 'an evaluation error')}) and the policy fails closed`;
}

/** The failing elements of an `all` over a list, each with its path and name. */
function failingElements(validation: CompiledValidation, run: PolicyRun, message: string): Evidence[] {
  const iteration = validation.iteration;
  if (!iteration) return [];
  const list = run.evaluateExtra(iteration.list, {});
  if (!list.ok || !Array.isArray(list.value)) return [];
  const evidence: Evidence[] = [];
  list.value.forEach((element, index) => {
    const result = run.evaluateExtra(iteration.body, { [iteration.variable]: toCelInput(element) });
    if (result.ok && result.value === true) return;
    const failure: Failure = result.ok ? { message } : { error: result.message };
    evidence.push({
      path: `${iteration.listPath}[${index}]`,
      message: text`${elementLabel(iteration, element, index)}: ${failureText(failure)}`,
    });
  });
  return evidence;
}

export type ValidationResult = { evidence: Evidence[] } | { unsupported: Text } | { budgetExceeded: string };

export function runValidations(compiledPolicy: CompiledPolicy, run: PolicyRun): ValidationResult {
  const evidence: Evidence[] = [];
  for (const validation of compiledPolicy.validations) {
    const result = run.evaluate(validation.program, validation.expression);
    if (!result.ok && result.unsupported)
      return {
        unsupported: text`a validation uses CEL not evaluated here: ${detail(result.message, 'an unsupported function')}`,
      };
    // The API server checks the binding's budget after each expression and stops there.
    if (run.spent > RUNTIME_CEL_COST_BUDGET)
      return { budgetExceeded: new CelCostExceeded('budget', RUNTIME_CEL_COST_BUDGET).message };
    if (result.ok && result.value === true) continue;
    // An expression that cannot be evaluated fails the request only when the policy fails closed.
    if (!result.ok && compiledPolicy.failurePolicy === 'Ignore') continue;
    const message = result.ok ? messageOf(validation, run) : '';
    const failure: Failure = result.ok ? { message } : { error: result.message };
    // Per-element evidence would repeat work the cost limit stopped: not for a cost error.
    const elements = !result.ok && result.costExceeded ? [] : failingElements(validation, run, message);
    evidence.push(
      ...(elements.length > 0
        ? elements
        : [
            {
              path: firstReferencePath(validation.expression, compiledPolicy.variablePaths),
              message: failureText(failure),
            },
          ]),
    );
  }
  return { evidence };
}

/**
 * An error of the whole binding (a cost budget, a misconfigured or unmatched paramRef): the policy's
 * failurePolicy decides, as the API server's does.
 */
function evaluationError(
  compiledPolicy: CompiledPolicy,
  policyName: string,
  message: string,
  stage: 'evaluating' | 'configuring' = 'evaluating',
): VerdictOutcome {
  const rule = text`ValidatingAdmissionPolicy "${objectName(policyName, null)}"`;
  const problem =
    stage === 'evaluating'
      ? text`the API server stops evaluating it (${detail(message, 'an evaluation error')})`
      : text`the API server cannot configure its binding (${detail(message, 'a configuration error')})`;
  if (compiledPolicy.failurePolicy === 'Ignore')
    return {
      verdict: 'passes',
      evidence: [],
      rule,
      reason: text`${problem} and its failurePolicy Ignore admits the object`,
    };
  const cause =
    stage === 'evaluating'
      ? text`the policy cannot be evaluated on it (${detail(message, 'an evaluation error')}) and fails closed`
      : text`the binding is misconfigured for it (${detail(message, 'a configuration error')}) and the policy fails closed`;
  return { verdict: 'violates', evidence: [{ path: '', message: cause }], rejects: 'object', rule };
}

/**
 * Each param's evaluation ANDed, as the API server does: any violation rejects, else anything
 * undecided is unknown; bindings whose match conditions exclude the object for every param do not apply.
 */
function combined(outcomes: readonly VerdictOutcome[]): VerdictOutcome {
  const verdicts = outcomes.filter((outcome): outcome is Verdict => outcome !== NOT_APPLICABLE);
  if (verdicts.length === 0) return NOT_APPLICABLE;
  const violations = verdicts.filter((verdict) => verdict.verdict === 'violates');
  if (violations.length > 0)
    return withFields(violations[0], { evidence: violations.flatMap((violation) => violation.evidence) });
  return verdicts.find((verdict) => verdict.verdict === 'unknown') ?? verdicts[0];
}

export function evaluateAdmissionPolicy(
  _constraint: Constraint,
  binding: KubernetesObject,
  context: VerdictContext,
): VerdictOutcome {
  const spec = isRecord(binding.spec) ? binding.spec : {};
  const policyName = typeof spec.policyName === 'string' ? spec.policyName : '';
  const policy = context.index.find(POLICY_GROUP, 'ValidatingAdmissionPolicy', null, policyName);
  if (!policy) return unknown(text`the bound ValidatingAdmissionPolicy is not in the index`);
  if (!operationsAllow(policy, context.admitted.operation)) return NOT_APPLICABLE;
  const compiledPolicy = compilePolicy(policy);
  if (compiledPolicy.refusedBecause !== undefined)
    return {
      verdict: 'passes',
      evidence: [],
      rule: text`ValidatingAdmissionPolicy "${objectName(policyName, null)}"`,
      reason: text`the API server refuses to store this policy (${detail(compiledPolicy.refusedBecause, 'an invalid field')}), so it is not enforced`,
    };
  if (needsRequester(compiledPolicy))
    return unknown(text`the policy depends on who makes the request (request.userInfo or authorizer)`);
  const resolution = resolveParams(compiledPolicy, binding, context);
  if ('missing' in resolution) return unknown(resolution.missing);
  if ('configurationError' in resolution)
    return evaluationError(compiledPolicy, policyName, resolution.configurationError, 'configuring');
  if (resolution.params.length === 0)
    return {
      verdict: 'passes',
      evidence: [],
      rule: text`ValidatingAdmissionPolicy "${objectName(policyName, null)}"`,
      reason: noParamsReason(binding),
    };
  return combined(
    resolution.params.map((params) =>
      evaluateWithParams(compiledPolicy, policyName, params ? objectAsCelInput(params) : null, context),
    ),
  );
}

/** One evaluation of the policy for the binding, with one param object (or none). */
function evaluateWithParams(
  compiledPolicy: CompiledPolicy,
  policyName: string,
  params: unknown,
  context: VerdictContext,
): VerdictOutcome {
  const { object, oldObject, namespace, namespaceLabels } = context.admitted;
  const bindings: Bindings = {
    object: admittedAsCelInput(object, context.guard),
    oldObject: oldObject ? admittedAsCelInput(oldObject, context.guard) : null,
    request: celRequestOf(context),
    params,
    namespaceObject: factOfEvaluation(context.guard, 'cel-namespace-object', context.admitted, () =>
      toCelInput({ metadata: { name: namespace, labels: { ...namespaceLabels } } }),
    ),
  };
  const excluded = matchConditionsOutcome(compiledPolicy, policyName, bindings, context);
  if (excluded) return excluded;
  const run = new PolicyRun(compiledPolicy, bindings, context.guard);
  const outcome = runValidations(compiledPolicy, run);
  if ('unsupported' in outcome) return unknown(outcome.unsupported);
  if ('budgetExceeded' in outcome) return evaluationError(compiledPolicy, policyName, outcome.budgetExceeded);
  const rule = text`ValidatingAdmissionPolicy "${objectName(policyName, null)}"`;
  if (outcome.evidence.length === 0) return { verdict: 'passes', evidence: [], rule };
  return { verdict: 'violates', evidence: outcome.evidence, rejects: 'object', rule };
}

/** What the match conditions decide for the object, or undefined when they all hold (or there are none). */
function matchConditionsOutcome(
  compiledPolicy: CompiledPolicy,
  policyName: string,
  bindings: Bindings,
  context: VerdictContext,
): VerdictOutcome | undefined {
  // No run for a policy without conditions, on every admission check.
  if (compiledPolicy.matchConditions.length === 0) return undefined;
  // A run of its own (its own variables); a run leaves the bindings it is given as they are.
  const matching = new PolicyRun(compiledPolicy, bindings, context.guard);
  for (const condition of compiledPolicy.matchConditions) {
    const result = matching.evaluate(condition.program, condition.expression);
    if (matching.spent > RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS)
      return evaluationError(
        compiledPolicy,
        policyName,
        `match conditions: running out of cost budget (RuntimeCELCostBudgetMatchConditions, ${RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS})`,
      );
    if (result.ok && result.value === false) return NOT_APPLICABLE;
    if (!result.ok && result.costExceeded)
      return evaluationError(
        compiledPolicy,
        policyName,
        `match condition ${condition.name}: ${result.message}`,
      );
    if (!result.ok)
      return unknown(
        text`match condition ${detail(condition.name, 'of the policy')} cannot be evaluated: ${detail(result.message, 'an error')}`,
      );
  }
  return undefined;
}
