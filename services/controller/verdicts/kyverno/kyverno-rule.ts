import type { ConstraintDraft as Constraint } from '../../../model/constraint';
import { isRecord, type KubernetesObject } from '../../../model/kubernetes';
import { podTemplateLocationOf } from '../../../model/workload';
import { detail, objectName, text, type Text } from '../../../model/text';
import { compileCel, toCelInput } from '../cel/cel-program';
import { evaluatePodSecurity, isPodSecurityLevel } from '../pod-security';
import {
  NOT_APPLICABLE,
  applies,
  unknown,
  type Evidence,
  type VerdictContext,
  type VerdictOutcome,
} from '../types';
import { matchPattern, usesVariables, type PatternResult } from './pattern';

// A Kyverno ClusterPolicy/Policy rule (constraint `<policy>/<rule>`) on one object: validate.pattern
// and anyPattern (pattern.ts), validate.podSecurity (the Pod Security Standards module),
// validate.cel (with the admission-policy CEL environment). A pod controller reached through
// Kyverno's auto-generation is checked through its pod template, as the generated rule would.
// `unknown`: preconditions and deny conditions (JMESPath), foreach, variables `{{ }}`.

type Fields = Record<string, unknown>;

function ruleOf(policy: KubernetesObject, constraintName: string): Fields | undefined {
  const ruleName = constraintName.slice(constraintName.indexOf('/') + 1);
  const spec = isRecord(policy.spec) ? policy.spec : {};
  const rules = Array.isArray(spec.rules) ? spec.rules.filter(isRecord) : [];
  return rules.find((rule) => rule.name === ruleName);
}

function matchedKinds(rule: Fields): string[] {
  const match = isRecord(rule.match) ? rule.match : {};
  const blocks = [
    match,
    ...(['any', 'all'] as const).flatMap((key) =>
      Array.isArray(match[key]) ? match[key].filter(isRecord) : [],
    ),
  ];
  return blocks.flatMap((block) => {
    const resources = isRecord(block.resources) ? block.resources : {};
    const kinds = Array.isArray(resources.kinds) ? resources.kinds : [];
    return kinds
      .filter((kind): kind is string => typeof kind === 'string')
      .map((kind) => kind.slice(kind.lastIndexOf('/') + 1));
  });
}

interface Subject {
  value: Fields;
  /** Prefix of evidence paths: `spec.template` when a pod controller is checked through its template. */
  prefix: string;
}

/** The object, or a controller's pod template when the rule names Pods and not the controller. */
function subjectOf(rule: Fields, object: KubernetesObject): Subject {
  const kinds = matchedKinds(rule);
  const kind = object.kind ?? '';
  if (kind !== 'Pod' && !kinds.includes(kind) && kinds.includes('Pod')) {
    const location = podTemplateLocationOf(object);
    if (location) return { value: location.template, prefix: location.path.join('.') };
  }
  return { value: object as Fields, prefix: '' };
}

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

function patternEvidence(
  subject: Subject,
  failure: Extract<PatternResult, { kind: 'fail' }>,
  message: string,
): Evidence {
  const field = failure.path.slice(failure.path.lastIndexOf('.') + 1) || 'the object';
  return {
    path: joinPath(subject.prefix, failure.path),
    message: text`${elementLabel(subject.value, failure.path)}${detail(message, 'it fails a rule of the policy')} (${field} is ${shown(failure.value)})`,
  };
}

function evaluatePatterns(
  validate: Fields,
  subject: Subject,
  message: string,
  context: VerdictContext,
): VerdictOutcome {
  const patterns =
    validate.pattern !== undefined
      ? [validate.pattern]
      : Array.isArray(validate.anyPattern)
        ? validate.anyPattern
        : [];
  if (patterns.some(usesVariables))
    return unknown(text`the pattern uses Kyverno variables, which are not substituted here`);
  const checkpoint = () => context.guard.checkpoint();
  const results = patterns.map((pattern) => matchPattern(pattern, subject.value, '', checkpoint));
  if (results.some((result) => result.kind === 'skip')) return NOT_APPLICABLE;
  const firstFailure = results.find((result) => result.kind === 'fail');
  if (results.some((result) => result.kind === 'pass') || !firstFailure || firstFailure.kind !== 'fail')
    return { verdict: 'passes', evidence: [] };
  return {
    verdict: 'violates',
    evidence: [patternEvidence(subject, firstFailure, message)],
    rejects: 'object',
  };
}

function evaluatePodSecurityRule(
  podSecurity: Fields,
  subject: Subject,
  context: VerdictContext,
): VerdictOutcome {
  if (Array.isArray(podSecurity.exclude) && podSecurity.exclude.length > 0)
    return unknown(text`podSecurity exclusions are not evaluated here`);
  const level = podSecurity.level;
  if (!isPodSecurityLevel(level))
    return unknown(text`podSecurity level ${String(level)} is not a Pod Security level`);
  const version = typeof podSecurity.version === 'string' ? podSecurity.version : 'latest';
  const failures = evaluatePodSecurity(subject.value, level, version, {
    pathPrefix: subject.prefix,
    guard: context.guard,
  });
  if (failures.length === 0) return { verdict: 'passes', evidence: [] };
  return {
    verdict: 'violates',
    evidence: failures.map((failure) => ({ path: failure.path, message: [failure.message] })),
    rejects: 'object',
  };
}

function evaluateCelRule(cel: Fields, subject: Subject, context: VerdictContext): VerdictOutcome {
  const expressions = Array.isArray(cel.expressions) ? cel.expressions.filter(isRecord) : [];
  const bindings = {
    object: toCelInput(subject.value),
    oldObject: context.admitted.oldObject ? toCelInput(context.admitted.oldObject) : null,
  };
  const evidence: Evidence[] = [];
  for (const entry of expressions) {
    if (typeof entry.expression !== 'string') continue;
    const result = compileCel(entry.expression)(bindings);
    if (!result.ok)
      return unknown(text`a CEL expression cannot be evaluated here: ${detail(result.message, 'an error')}`);
    if (result.value === true) continue;
    const message =
      typeof entry.message === 'string' ? entry.message : `failed expression: ${entry.expression}`;
    evidence.push({ path: subject.prefix, message: [detail(message, 'it fails a rule of the policy')] });
  }
  return evidence.length === 0
    ? { verdict: 'passes', evidence: [] }
    : { verdict: 'violates', evidence, rejects: 'object' };
}

/** A rule's verdict names the rule: `Kyverno ClusterPolicy "p" rule "r"`. */
export function evaluateKyvernoRule(
  constraint: Constraint,
  policy: KubernetesObject,
  context: VerdictContext,
): VerdictOutcome {
  const outcome = evaluateRule(constraint, policy, context);
  if (outcome === NOT_APPLICABLE) return outcome;
  const ruleName = constraint.name.slice(constraint.name.indexOf('/') + 1);
  const name = objectName(constraint.source.name, constraint.source.namespace);
  return {
    ...outcome,
    rule: text`Kyverno ${constraint.source.kind} "${name}" rule "${objectName(ruleName, constraint.source.namespace)}"`,
  };
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
  if (!isRecord(rule.validate)) return applies();
  if (rule.preconditions !== undefined)
    return unknown(text`the rule has preconditions (JMESPath), not evaluated here`);
  const validate = rule.validate;
  const subject = subjectOf(rule, context.admitted.object);
  const message =
    typeof validate.message === 'string' ? validate.message : `validation rule ${String(rule.name)} failed`;
  if (validate.pattern !== undefined || validate.anyPattern !== undefined)
    return evaluatePatterns(validate, subject, message, context);
  if (isRecord(validate.podSecurity)) return evaluatePodSecurityRule(validate.podSecurity, subject, context);
  if (isRecord(validate.cel)) return evaluateCelRule(validate.cel, subject, context);
  const what: Text =
    validate.deny !== undefined
      ? text`deny conditions (JMESPath)`
      : validate.foreach !== undefined
        ? text`foreach`
        : text`this kind of validation`;
  return unknown(text`Kyverno ${what} not evaluated here`);
}
