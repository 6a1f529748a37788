import { celMap, type CelValue } from '@bufbuild/cel';
import { groupOf, isRecord, versionOf } from '../../../model/kubernetes';
import { pluralOfKind } from '../../../model/resources';
import { detail } from '../../../model/text';
import {
  compileCel,
  admittedAsCelInput,
  toCelInput,
  type CelOutcome,
  type CelProgram,
} from '../cel/cel-program';
import { CelCostExceeded, CostTracker, PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET } from '../cel/runtime-cost';
import type { Evidence, VerdictContext } from '../types';
import { KyvernoRuleError, NotEvaluable } from './kyverno-errors';
import { PASS, type StepResult } from './step-result';

// Kyverno's CEL: a ClusterPolicy rule's `validate.cel` and a policies.kyverno.io ValidatingPolicy,
// evaluated as Kyverno 1.19 does (the ValidatingAdmissionPolicy machinery of k8s.io/apiserver):
// preconditions / match conditions (one false: the rule does not apply), `variables` (lazy, as
// `variables.<name>`), `namespaceObject`, `request`, then each expression; one false fails the rule
// with its message or messageExpression, and one that errors fails it too (failure policy Fail).
// `unknown`: params, who makes the request (request.userInfo, authorizer), CEL not implemented here.

const NEEDS_REQUESTER = /\brequest\.userInfo\b|\bauthorizer\b/;

const programs = new Map<string, CelProgram>();
const PROGRAM_LIMIT = 2000;

function program(expression: string): CelProgram {
  let compiled = programs.get(expression);
  if (!compiled) {
    if (NEEDS_REQUESTER.test(expression))
      throw new NotEvaluable('it depends on who makes the request (request.userInfo or authorizer)');
    compiled = compileCel(expression);
    if (programs.size >= PROGRAM_LIMIT) programs.clear();
    programs.set(expression, compiled);
  }
  return compiled;
}

export interface NamedExpression {
  name: string;
  expression: string;
}

export interface CelValidation {
  expression: string;
  message?: string;
  messageExpression?: string;
}

export interface CelPolicyParts {
  matchConditions: NamedExpression[];
  variables: NamedExpression[];
  validations: CelValidation[];
  /** The message of validations that have none (a ClusterPolicy rule's validate.message). */
  defaultMessage?: string;
}

export function namedExpressions(value: unknown): NamedExpression[] {
  return (Array.isArray(value) ? value.filter(isRecord) : []).flatMap((entry) =>
    typeof entry.expression === 'string'
      ? [{ name: String(entry.name ?? ''), expression: entry.expression }]
      : [],
  );
}

export function celValidations(value: unknown): CelValidation[] {
  return (Array.isArray(value) ? value.filter(isRecord) : []).flatMap((entry) =>
    typeof entry.expression === 'string'
      ? [
          {
            expression: entry.expression,
            ...(typeof entry.message === 'string' ? { message: entry.message } : {}),
            ...(typeof entry.messageExpression === 'string'
              ? { messageExpression: entry.messageExpression }
              : {}),
          },
        ]
      : [],
  );
}

/** What one rule's expressions have cost so far: Kyverno runs them on the API server's CEL stack. */
interface CostSpent {
  cost: number;
}

/**
 * One expression under Kubernetes' cost model: PerCallLimit per expression and RuntimeCELCostBudget
 * for the rule's expressions together (cel/cost-tracker.ts); a stop is an evaluation error, which
 * fails the rule as any other error does (failure policy Fail).
 */
function run(
  expression: string,
  bindings: Record<string, unknown>,
  what: string,
  context: VerdictContext,
  spent: CostSpent,
  resultAs: 'javascript' | 'cel' = 'javascript',
): CelOutcome {
  const remaining = Math.max(0, RUNTIME_CEL_COST_BUDGET - spent.cost);
  const tracker = new CostTracker(context.guard, Math.min(remaining, PER_CALL_LIMIT));
  const result = program(expression)(bindings, tracker, resultAs);
  spent.cost += result.cost;
  if (!result.ok && result.unsupported)
    throw new NotEvaluable(`${what} uses CEL not evaluated here: ${result.message}`);
  if (!result.ok && result.costExceeded && remaining < PER_CALL_LIMIT)
    return { ...result, message: new CelCostExceeded('budget', RUNTIME_CEL_COST_BUDGET).message };
  return result;
}

/** The admission request as CEL sees it. */
function requestOf(object: Record<string, unknown>, context: VerdictContext): Record<string, unknown> {
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : 'v1';
  const kind = typeof object.kind === 'string' ? object.kind : '';
  const metadata = isRecord(object.metadata) ? object.metadata : {};
  return {
    operation: context.admitted.operation,
    namespace: context.admitted.namespace,
    name: typeof metadata.name === 'string' ? metadata.name : '',
    kind: { group: groupOf(apiVersion), version: versionOf(apiVersion), kind },
    resource: { group: groupOf(apiVersion), version: versionOf(apiVersion), resource: pluralOfKind(kind) },
    dryRun: false,
  };
}

/** Evaluates the CEL parts on `object` (the resource, or a controller's pod template as a pod). */
export function evaluateCelParts(
  parts: CelPolicyParts,
  object: Record<string, unknown>,
  prefix: string,
  context: VerdictContext,
): StepResult {
  const { oldObject, namespace, namespaceLabels } = context.admitted;
  // Bound as a CEL map over this Map: a plain object would be copied into a map at every access.
  const variables = new Map<string, unknown>();
  const spent: CostSpent = { cost: 0 };
  const bindings: Record<string, unknown> = {
    object: admittedAsCelInput(object, context.guard),
    oldObject: oldObject ? admittedAsCelInput(oldObject, context.guard) : null,
    request: toCelInput(requestOf(object, context)),
    namespaceObject:
      object.kind === 'Namespace'
        ? null
        : toCelInput({ metadata: { name: namespace, labels: { ...namespaceLabels } } }),
    params: null,
    variables: celMap(variables as Map<string, CelValue>),
  };
  for (const condition of parts.matchConditions) {
    context.guard.checkpoint();
    const result = run(condition.expression, bindings, `precondition ${condition.name}`, context, spent);
    if (!result.ok)
      throw new KyvernoRuleError(`precondition ${condition.name} failed to evaluate: ${result.message}`);
    if (result.value !== true) return { kind: 'skip' };
  }
  for (const variable of parts.variables) {
    context.guard.checkpoint();
    const result = run(variable.expression, bindings, `variable ${variable.name}`, context, spent, 'cel');
    // A variable that fails makes the validations using it fail; leaving it unset has that effect.
    if (result.ok) variables.set(variable.name, result.value);
  }
  const evidence: Evidence[] = [];
  for (const validation of parts.validations) {
    context.guard.checkpoint();
    const result = run(validation.expression, bindings, 'a validation', context, spent);
    if (result.ok && result.value === true) continue;
    evidence.push({
      path: prefix,
      message: [
        detail(messageOf(validation, parts, bindings, result, context), 'it fails a rule of the policy'),
      ],
    });
  }
  return evidence.length === 0 ? PASS : { kind: 'fail', evidence };
}

function messageOf(
  validation: CelValidation,
  parts: CelPolicyParts,
  bindings: Record<string, unknown>,
  result: { ok: true; value: unknown } | { ok: false; message: string },
  context: VerdictContext,
): string {
  if (!result.ok) return `the expression fails to evaluate (${result.message}) and the policy fails closed`;
  if (validation.messageExpression) {
    // Under the object's guard and the per-call limit, as the validation itself: a message expression
    // is policy code too. Past its limit the static message is used, as by the API server.
    const tracker = new CostTracker(context.guard, PER_CALL_LIMIT);
    const message = program(validation.messageExpression)(bindings, tracker);
    if (message.ok && typeof message.value === 'string' && message.value.trim() !== '') return message.value;
  }
  return validation.message ?? parts.defaultMessage ?? `failed expression: ${validation.expression}`;
}

/** A ClusterPolicy rule's `validate.cel`, with the rule's `celPreconditions`. */
export function evaluateKyvernoCel(
  rule: Record<string, unknown>,
  validate: Record<string, unknown>,
  subject: { value: Record<string, unknown>; prefix: string },
  context: VerdictContext,
): StepResult {
  const cel = isRecord(validate.cel) ? validate.cel : {};
  if (cel.paramKind !== undefined || cel.paramRef !== undefined)
    throw new NotEvaluable('the rule reads params, which the index does not hold for Kyverno rules');
  return evaluateCelParts(
    {
      matchConditions: namedExpressions(rule.celPreconditions),
      variables: namedExpressions(cel.variables),
      validations: celValidations(cel.expressions),
      ...(typeof validate.message === 'string' ? { defaultMessage: validate.message } : {}),
    },
    subject.value,
    subject.prefix,
    context,
  );
}
