import type { ConstraintDraft as Constraint } from '../../model/constraint';
import { groupOf, isRecord, versionOf, type KubernetesObject } from '../../model/kubernetes';
import { pluralOfKind } from '../../model/resources';
import { detail, objectName, text, type Text } from '../../model/text';
import { objectAsCelInput, toCelInput } from './cel/cel-program';
import {
  compilePolicy,
  firstReferencePath,
  type CompiledPolicy,
  type CompiledValidation,
} from './cel/compiled-policy';
import { NOT_APPLICABLE, unknown, type Evidence, type VerdictContext, type VerdictOutcome } from './types';

// ValidatingAdmissionPolicy as the API server evaluates it for one binding: matchConditions (all
// true, else the policy does not apply), variables, validations with message / messageExpression /
// reason, params when the index holds them, failurePolicy for expressions that fail to evaluate.
// `unknown` when an expression needs who is asking (request.userInfo, authorizer), params the index
// lacks, or a CEL function not implemented here (cel/kubernetes-extensions.ts).

const POLICY_GROUP = 'admissionregistration.k8s.io';
const NEEDS_REQUESTER = /\brequest\.userInfo\b|\bauthorizer\b/;

type Bindings = Record<string, unknown>;

function operationsAllow(policy: KubernetesObject, operation: string): boolean {
  const spec = isRecord(policy.spec) ? policy.spec : {};
  const constraints = isRecord(spec.matchConstraints) ? spec.matchConstraints : {};
  const rules = Array.isArray(constraints.resourceRules) ? constraints.resourceRules.filter(isRecord) : [];
  if (rules.length === 0) return true;
  return rules.some(
    (rule) =>
      !Array.isArray(rule.operations) || rule.operations.includes('*') || rule.operations.includes(operation),
  );
}

function requestOf(context: VerdictContext): Record<string, unknown> {
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

function findParams(
  compiledPolicy: CompiledPolicy,
  binding: KubernetesObject,
  context: VerdictContext,
): { params: unknown } | { missing: Text } {
  if (!compiledPolicy.paramKind) return { params: null };
  const spec = isRecord(binding.spec) ? binding.spec : {};
  const reference = isRecord(spec.paramRef) ? spec.paramRef : {};
  const { kind, apiVersion } = compiledPolicy.paramKind;
  if (typeof reference.name !== 'string')
    return {
      missing: text`its params are chosen by a selector over ${kind} objects, which the index does not hold`,
    };
  const namespace = typeof reference.namespace === 'string' ? reference.namespace : null;
  const params =
    context.index.find(groupOf(apiVersion), kind, namespace, reference.name) ??
    context.index.find(groupOf(apiVersion), kind, context.admitted.namespace, reference.name);
  if (!params)
    return {
      missing: text`its params (${kind} ${detail(reference.name, 'named in the binding')}) are not in the index`,
    };
  return { params: toCelInput(params) };
}

function messageOf(validation: CompiledValidation, bindings: Bindings): string {
  if (validation.messageExpression) {
    const result = validation.messageExpression.program(bindings);
    if (result.ok && typeof result.value === 'string' && result.value.trim() !== '') return result.value;
  }
  return validation.message ?? `failed expression: ${validation.expression}`;
}

function elementLabel(listPath: string, element: unknown, index: number): string {
  const field = listPath.slice(listPath.lastIndexOf('.') + 1);
  const singular = field
    .replace(/ies$/, 'y')
    .replace(/s$/, '')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase();
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
function failingElements(validation: CompiledValidation, bindings: Bindings, message: string): Evidence[] {
  const iteration = validation.iteration;
  if (!iteration) return [];
  const list = iteration.list(bindings);
  if (!list.ok || !Array.isArray(list.value)) return [];
  const evidence: Evidence[] = [];
  list.value.forEach((element, index) => {
    const result = iteration.body({ ...bindings, [iteration.variable]: toCelInput(element) });
    if (result.ok && result.value === true) return;
    const failure: Failure = result.ok ? { message } : { error: result.message };
    evidence.push({
      path: `${iteration.listPath}[${index}]`,
      message: text`${elementLabel(iteration.listPath, element, index)}: ${failureText(failure)}`,
    });
  });
  return evidence;
}

type ValidationResult = { evidence: Evidence[] } | { unsupported: Text };

function runValidations(compiledPolicy: CompiledPolicy, bindings: Bindings): ValidationResult {
  const evidence: Evidence[] = [];
  for (const validation of compiledPolicy.validations) {
    const result = validation.program(bindings);
    if (!result.ok && result.unsupported)
      return {
        unsupported: text`a validation uses CEL not evaluated here: ${detail(result.message, 'an unsupported function')}`,
      };
    if (result.ok && result.value === true) continue;
    // An expression that cannot be evaluated fails the request only when the policy fails closed.
    if (!result.ok && compiledPolicy.failurePolicy === 'Ignore') continue;
    const message = result.ok ? messageOf(validation, bindings) : '';
    const failure: Failure = result.ok ? { message } : { error: result.message };
    const elements = failingElements(validation, bindings, message);
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

function evaluateVariables(compiledPolicy: CompiledPolicy, bindings: Bindings): Text | undefined {
  const variables: Record<string, unknown> = {};
  bindings.variables = variables;
  for (const variable of compiledPolicy.variables) {
    const result = variable.program(bindings);
    if (!result.ok && result.unsupported)
      return text`a variable uses CEL not evaluated here: ${detail(result.message, 'an unsupported function')}`;
    // A variable that fails makes the validations using it fail; leaving it unset has that effect.
    if (result.ok) variables[variable.name] = toCelInput(result.value);
  }
  return undefined;
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
  if (compiledPolicy.sources.some((source) => NEEDS_REQUESTER.test(source)))
    return unknown(text`the policy depends on who makes the request (request.userInfo or authorizer)`);
  const params = findParams(compiledPolicy, binding, context);
  if ('missing' in params) return unknown(params.missing);
  const { object, oldObject, namespace, namespaceLabels } = context.admitted;
  const bindings: Bindings = {
    object: objectAsCelInput(object),
    oldObject: oldObject ? objectAsCelInput(oldObject) : null,
    request: requestOf(context),
    params: params.params,
    namespaceObject: { metadata: { name: namespace, labels: { ...namespaceLabels } } },
  };
  for (const condition of compiledPolicy.matchConditions) {
    const result = condition.program(bindings);
    if (result.ok && result.value === false) return NOT_APPLICABLE;
    if (!result.ok)
      return unknown(
        text`match condition ${detail(condition.name, 'of the policy')} cannot be evaluated: ${detail(result.message, 'an error')}`,
      );
  }
  const variablesProblem = evaluateVariables(compiledPolicy, bindings);
  if (variablesProblem) return unknown(variablesProblem);
  const outcome = runValidations(compiledPolicy, bindings);
  if ('unsupported' in outcome) return unknown(outcome.unsupported);
  const rule = text`ValidatingAdmissionPolicy "${objectName(policyName, null)}"`;
  if (outcome.evidence.length === 0) return { verdict: 'passes', evidence: [], rule };
  return { verdict: 'violates', evidence: outcome.evidence, rejects: 'object', rule };
}
