import type { ConstraintDraft as Constraint } from '../../../model/constraint';
import { isRecord, type KubernetesObject } from '../../../model/kubernetes';
import { isAutogenApiVersion } from '../../../model/kyverno-autogen';
import { withFields } from '../../../model/object-copy';
import { detail, text, type Text } from '../../../model/text';
import { evaluatePodSecurity, isPodSecurityLevel } from '../pod-security';
import {
  NOT_APPLICABLE,
  applies,
  unknown,
  type Evidence,
  type VerdictContext,
  type VerdictOutcome,
} from '../types';
import { evaluateKyvernoCel } from './kyverno-cel-rule';
import { conditionsHold } from './kyverno-conditions';
import { KyvernoRuleError, NotEvaluable } from './kyverno-errors';
import { baseContext, ruleContext } from './kyverno-rule-context';
import { resolve, substituteVariables, type JsonContext } from './kyverno-variables';
import { AmbiguousPattern, matchPattern, type PatternResult } from './pattern';
import { PASS, type StepResult } from './step-result';
import { applyPodSecurityExclusions } from './pod-security-exclusions';
import {
  matchedKinds,
  ruleOf,
  ruleText,
  subjectOf,
  withoutPreconditions,
  type Subject,
} from './rule-subject';
import { ruleSelectsRequest } from './rule-match';

// A Kyverno ClusterPolicy/Policy rule (constraint `<policy>/<rule>`) on one object, in the order
// Kyverno 1.19's engine takes it: the rule's `variable` context entries, its JMESPath preconditions
// (false: the rule does not apply), then validate.deny (conditions), pattern / anyPattern (with
// variables substituted), foreach (elements, element scope, nested foreach), podSecurity (with
// exclusions) or cel (celPreconditions, variables, namespaceObject). A pod controller reached through
// Kyverno's auto-generation is checked through its pod template, as the generated rule would.
// Whether the rule applies at all is decided per request first (rule-match.ts: operations, selectors,
// exclusions, who asks). `unknown`, with the reason: who makes the request (request.userInfo), context Kyverno loads from
// the cluster (apiCall, configMap), functions of time or randomness, and what Kyverno answers with an
// error rather than pass or fail.

type Fields = Record<string, unknown>;

function joinPath(prefix: string, path: string): string {
  return prefix && path ? `${prefix}.${path}` : prefix || path;
}

/** `container "web": ` when the path is inside a container, read from the subject. */
function elementLabel(subject: Fields, path: string): string {
  const match = /^(.*?(?:initContainers|ephemeralContainers|containers))\[(\d+)\]/.exec(path);
  if (!match) return '';
  let current: unknown = subject;
  for (const key of match[1].split('.')) current = isRecord(current) ? current[key] : undefined;
  const element = Array.isArray(current) ? current[Number(match[2])] : undefined;
  const name = isRecord(element) && typeof element.name === 'string' ? element.name : `#${match[2]}`;
  return `container "${name}": `;
}

function shown(value: unknown): string {
  if (value === undefined) return 'not set';
  const json = JSON.stringify(value);
  return json.length > 60 ? `${json.slice(0, 57)}...` : json;
}

interface Evaluation {
  subject: Subject;
  context: JsonContext;
  message: string;
  checkpoint: () => void;
}

function ruleMessage(evaluation: Evaluation): string {
  try {
    const substituted = substituteVariables(evaluation.message, evaluation.context, evaluation.checkpoint);
    return typeof substituted === 'string' ? substituted : evaluation.message;
  } catch {
    return evaluation.message;
  }
}

function patternFailure(
  evaluation: Evaluation,
  failure: Extract<PatternResult, { kind: 'fail' }>,
  base: string,
  labelSource: Fields,
): Evidence {
  const field = failure.path.slice(failure.path.lastIndexOf('.') + 1) || 'the object';
  const path = joinPath(base, failure.path);
  return {
    path: joinPath(evaluation.subject.prefix, path),
    message: text`${elementLabel(labelSource, path)}${detail(ruleMessage(evaluation), 'it fails a rule of the policy')} (${field} is ${shown(failure.value)})`,
  };
}

function errorOf(result: PatternResult): never {
  throw new KyvernoRuleError(result.kind === 'error' ? result.message : 'the pattern cannot be evaluated');
}

/**
 * pattern or anyPattern on the resource (or the foreach element in scope); `base` is the element's
 * path in the subject, for evidence.
 */
function validatePatterns(
  validate: Fields,
  evaluation: Evaluation,
  resource: unknown,
  base: string,
): StepResult {
  if (validate.pattern !== undefined && validate.pattern !== null) {
    const pattern = substituteVariables(validate.pattern, evaluation.context, evaluation.checkpoint);
    const result = matchPattern(pattern, resource, evaluation.checkpoint);
    if (result.kind === 'pass') return PASS;
    if (result.kind === 'skip') return { kind: 'skip' };
    if (result.kind === 'error') errorOf(result);
    return { kind: 'fail', evidence: [patternFailure(evaluation, result, base, evaluation.subject.value)] };
  }
  const patterns = Array.isArray(validate.anyPattern) ? validate.anyPattern : [];
  let firstFailure: Extract<PatternResult, { kind: 'fail' }> | undefined;
  let failures = 0;
  let skips = 0;
  for (const raw of patterns) {
    const pattern = substituteVariables(raw, evaluation.context, evaluation.checkpoint);
    const result = matchPattern(pattern, resource, evaluation.checkpoint);
    if (result.kind === 'pass') return PASS;
    if (result.kind === 'skip') skips++;
    else {
      failures++;
      if (result.kind === 'fail') firstFailure ??= result;
    }
  }
  if (failures > 0)
    return {
      kind: 'fail',
      evidence: firstFailure
        ? [patternFailure(evaluation, firstFailure, base, evaluation.subject.value)]
        : [
            {
              path: evaluation.subject.prefix,
              message: [detail(ruleMessage(evaluation), 'it fails a rule of the policy')],
            },
          ],
    };
  return skips > 0 ? { kind: 'skip' } : PASS;
}

function denyStep(validate: Fields, evaluation: Evaluation, path: string): StepResult {
  const deny = isRecord(validate.deny) ? validate.deny : {};
  if (!conditionsHold(deny.conditions ?? null, evaluation.context, evaluation.checkpoint)) return PASS;
  // deny with no conditions denies everything, as in Kyverno.
  return {
    kind: 'fail',
    evidence: [
      {
        path: joinPath(evaluation.subject.prefix, path),
        message: [detail(ruleMessage(evaluation), 'it fails a rule of the policy')],
      },
    ],
  };
}

/** The object path a foreach list names (`request.object.spec.containers` → `spec.containers`). */
function listPath(list: string, parent: string): string {
  const object = /^request\.object\.([\w.]+)$/.exec(list.trim());
  if (object) return object[1];
  const element = /^element\d*\.([\w.]+)$/.exec(list.trim());
  if (element && parent) return `${parent}.${element[1]}`;
  return parent;
}

interface ForeachScope {
  nesting: number;
  /** The element the pattern applies to (element scope), with its path in the subject. */
  element?: { value: unknown; path: string };
}

function withElement(context: JsonContext, element: unknown, index: number, nesting: number): JsonContext {
  return withFields(context, {
    data: withFields(context.data, {
      element,
      [`element${nesting}`]: element,
      elementIndex: index,
      [`elementIndex${nesting}`]: index,
    }),
  });
}

/** One validator level (the rule, or a foreach body): Kyverno's validator.validate. */
function validateLevel(validate: Fields, evaluation: Evaluation, scope: ForeachScope): StepResult {
  if (!conditionsHold(validate.preconditions ?? null, evaluation.context, evaluation.checkpoint))
    return { kind: 'skip' };
  const at = scope.element?.path ?? '';
  if (validate.deny !== undefined && validate.deny !== null) return denyStep(validate, evaluation, at);
  if (
    (validate.pattern !== undefined && validate.pattern !== null) ||
    (validate.anyPattern !== undefined && validate.anyPattern !== null)
  ) {
    if (scope.element) return validatePatterns(validate, evaluation, scope.element.value, scope.element.path);
    return validatePatterns(validate, evaluation, evaluation.subject.value, '');
  }
  if (Array.isArray(validate.foreach)) return validateForeach(validate.foreach, evaluation, scope);
  return { kind: 'none' };
}

function validateForeach(entries: unknown[], evaluation: Evaluation, scope: ForeachScope): StepResult {
  let applied = 0;
  for (const entry of entries) {
    if (!isRecord(entry) || typeof entry.list !== 'string') continue;
    if (entry.context !== undefined)
      throw new NotEvaluable('a foreach declares its own context, not evaluated here');
    const listValue = resolve(entry.list, evaluation.context);
    const elements = Array.isArray(listValue) ? listValue : [listValue];
    const path = listPath(entry.list, scope.element?.path ?? '');
    const elementScope = typeof entry.elementScope === 'boolean' ? entry.elementScope : undefined;
    for (let index = 0; index < elements.length; index++) {
      evaluation.checkpoint();
      const element: unknown = elements[index];
      if (element === null || element === undefined) continue;
      const scoped = elementScope ?? isRecord(element);
      if (elementScope === true && !isRecord(element))
        throw new KyvernoRuleError('elementScope is true for elements that are not maps');
      const elementPath = Array.isArray(listValue) ? `${path}[${index}]` : path;
      const inner: Evaluation = withFields(evaluation, {
        context: withElement(evaluation.context, element, index, scope.nesting),
      });
      const innerScope: ForeachScope = {
        nesting: scope.nesting + 1,
        element: scoped ? { value: element, path: elementPath } : scope.element,
      };
      let result: StepResult;
      try {
        result = validateLevel(entry, inner, innerScope);
      } catch (error) {
        // Kyverno skips an element whose preconditions fail to evaluate.
        if (error instanceof KyvernoRuleError && entry.preconditions !== undefined) continue;
        throw error;
      }
      if (result.kind === 'none' || result.kind === 'skip') continue;
      if (result.kind === 'fail') return result;
      applied++;
    }
  }
  return applied === 0 ? { kind: 'none' } : PASS;
}

function evaluatePodSecurityRule(podSecurity: Fields, subject: Subject): StepResult {
  const level = podSecurity.level;
  if (!isPodSecurityLevel(level))
    throw new KyvernoRuleError(`podSecurity level ${String(level)} is not a Pod Security level`);
  const version = typeof podSecurity.version === 'string' ? podSecurity.version : 'latest';
  const failures = applyPodSecurityExclusions(
    evaluatePodSecurity(subject.value, level, version),
    podSecurity.exclude,
    subject.value,
    level,
    version,
  );
  if (failures.length === 0) return PASS;
  return {
    kind: 'fail',
    evidence: failures.map((failure) => ({
      path: joinPath(subject.prefix, failure.path),
      message: [failure.message],
    })),
  };
}

function toOutcome(result: StepResult): VerdictOutcome {
  switch (result.kind) {
    case 'pass':
      return { verdict: 'passes', evidence: [] };
    case 'fail':
      return { verdict: 'violates', evidence: result.evidence, rejects: 'object' };
    default:
      return NOT_APPLICABLE;
  }
}

/** A rule's verdict names the rule: `Kyverno ClusterPolicy "p" rule "r"`. */
export function evaluateKyvernoRule(
  constraint: Constraint,
  policy: KubernetesObject,
  context: VerdictContext,
): VerdictOutcome {
  const outcome = evaluateRule(constraint, policy, context);
  if (outcome === NOT_APPLICABLE) return outcome;
  return withFields(outcome, { rule: ruleText(constraint) });
}

function evaluateRule(
  constraint: Constraint,
  policy: KubernetesObject,
  context: VerdictContext,
): VerdictOutcome {
  if (!constraint.source.apiVersion.startsWith('kyverno.io/'))
    return unknown(text`this kind of policy is not evaluated here`);
  const rule = ruleOf(policy, constraint.name);
  if (!rule) return unknown(text`the rule is not in the policy the index holds`);
  const object = context.admitted.object;
  // What the rule sees as the object: read once, for the autogen test and for the evaluation.
  const subject = subjectOf(matchedKinds(rule), object);
  const throughAutogen = subject.prefix !== '';
  if (throughAutogen && !isAutogenApiVersion(object.kind, object.apiVersion)) return NOT_APPLICABLE;
  const selection = ruleSelectsRequest(rule, { admitted: context.admitted, throughAutogen });
  if (selection.kind === 'not-selected') return NOT_APPLICABLE;
  // Shown with the namespace's standing constraints (issue 31): the reason says why there is no verdict.
  if (!isRecord(rule.validate))
    return applies(
      text`nothing to evaluate: the rule validates nothing (it mutates, generates or verifies images)`,
    );
  if (selection.kind === 'undecided')
    return unknown(
      text`whether the rule applies depends on ${detail(selection.missing, 'who makes the request')}, which is not known here`,
    );
  try {
    const result = evaluateValidateRule(rule, rule.validate, context, subject);
    if (result.kind === 'fail' && existingViolationAllowed(rule, rule.validate, policy, context))
      return NOT_APPLICABLE;
    return toOutcome(result);
  } catch (error) {
    if (error instanceof NotEvaluable)
      return unknown(
        text`the rule is not evaluated here: ${detail(error.message, 'it needs data Forewarn lacks')}`,
      );
    if (error instanceof KyvernoRuleError)
      return unknown(
        text`Kyverno reports an error rather than pass or fail for this rule: ${detail(error.message, 'an evaluation error')}`,
      );
    if (error instanceof AmbiguousPattern)
      return unknown(
        text`Kyverno's answer depends on a random choice: ${detail(error.message, 'several keys match')}`,
      );
    throw error;
  }
}

/**
 * Kyverno skips an Enforce rule on an UPDATE when the stored object already failed it (its
 * `allowExistingViolations`, true unless the rule says false): the rule is evaluated on the old object
 * as its CREATE, and a failure on both is no violation of this request.
 */
function existingViolationAllowed(
  rule: Fields,
  validate: Fields,
  policy: KubernetesObject,
  context: VerdictContext,
): boolean {
  const { admitted } = context;
  if (admitted.operation !== 'UPDATE' || admitted.oldObject === undefined || admitted.rollout) return false;
  if (validate.allowExistingViolations === false) return false;
  const spec = isRecord(policy.spec) ? policy.spec : {};
  const action = validate.failureAction ?? spec.validationFailureAction;
  if (typeof action !== 'string' || action.toLowerCase() !== 'enforce') return false;
  const created = withFields(admitted, {
    object: admitted.oldObject,
    oldObject: undefined,
    operation: 'CREATE' as const,
  });
  const subject = subjectOf(matchedKinds(rule), created.object);
  const throughAutogen = subject.prefix !== '';
  if (ruleSelectsRequest(rule, { admitted: created, throughAutogen }).kind !== 'selected') return false;
  return (
    evaluateValidateRule(rule, validate, withFields(context, { admitted: created }), subject).kind === 'fail'
  );
}

function evaluateValidateRule(
  rule: Fields,
  validate: Fields,
  context: VerdictContext,
  subject: Subject,
): StepResult {
  const checkpoint = () => context.guard.checkpoint();
  const jsonContext = ruleContext(rule, baseContext(subject, context), checkpoint);
  if (!conditionsHold(rule.preconditions ?? null, jsonContext, checkpoint)) return { kind: 'skip' };
  const message =
    typeof validate.message === 'string' ? validate.message : `validation rule ${String(rule.name)} failed`;
  const evaluation: Evaluation = { subject, context: jsonContext, message, checkpoint };
  if (isRecord(validate.podSecurity)) return evaluatePodSecurityRule(validate.podSecurity, subject);
  if (isRecord(validate.cel)) return evaluateKyvernoCel(rule, validate, subject, context);
  const what: Text | undefined =
    validate.manifests !== undefined ? text`verifying signed manifests` : undefined;
  if (what) throw new NotEvaluable('verifying signed manifests needs signatures and keys');
  return validateLevel(withoutPreconditions(validate), evaluation, { nesting: 0 });
}
