import type { CelCode } from '../../../model/gatekeeper';
import { isRecord, type KubernetesObject } from '../../../model/kubernetes';
import { detail, text } from '../../../model/text';
import { celRequestOf, needsRequester, PolicyRun, runValidations, type Bindings } from '../admission-policy';
import { admittedAsCelInput, objectAsCelInput, toCelInput } from '../cel/cel-program';
import { compilePolicy, type CompiledPolicy } from '../cel/compiled-policy';
import { RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS } from '../cel/runtime-cost';
import type { VerdictContext } from '../types';
import type { TemplateOutcome } from './template-outcome';
import { withFields } from '../../../model/object-copy';
import { factOfEvaluation } from '../evaluation-memo';

// A template's K8sNativeValidation code as Gatekeeper's CEL driver runs it: a ValidatingAdmissionPolicy
// whose `params` is the constraint itself, with two variables Gatekeeper prepends — `params`, the
// constraint's spec.parameters, and `anyObject`, the object (the old object on DELETE) — before the
// template's own; then match conditions, validations with message/messageExpression, failurePolicy,
// under Kubernetes' CEL cost limits (the shared evaluator of admission-policy.ts). Admission checks
// are CREATE or UPDATE, where `anyObject` is `object`: the template's expressions read `object`
// directly (so evidence paths name the object's fields), and `params` is bound once per constraint
// instead of being converted out of CEL and back on every evaluation.

const ANY_OBJECT = /\bvariables\.anyObject\b/g;

function readingObject(entries: unknown[]): unknown[] {
  return entries.map((entry) => {
    if (!isRecord(entry)) return entry;
    const rewritten: Record<string, unknown> = { ...entry };
    for (const field of ['expression', 'messageExpression'])
      if (typeof entry[field] === 'string') rewritten[field] = entry[field].replace(ANY_OBJECT, 'object');
    return rewritten;
  });
}

// Compiled once per template code: by object (the fast path) and by content, so that the copy the
// index keeps finds what was compiled when the template arrived (template-preparation.ts).
const policies = new WeakMap<CelCode, CompiledPolicy>();
const policiesByContent = new Map<string, CompiledPolicy>();
/** Templates a cluster may hold; past it the oldest compilation is dropped (and redone if needed). */
const MAX_COMPILED_TEMPLATES = 1000;

export function compiledTemplate(code: CelCode, templateName: string): CompiledPolicy {
  let compiled = policies.get(code);
  if (compiled) return compiled;
  const content = JSON.stringify(code);
  compiled = policiesByContent.get(content);
  if (!compiled) {
    const policy: KubernetesObject = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: templateName },
      spec: {
        failurePolicy: code.failurePolicy,
        matchConditions: readingObject(code.matchConditions),
        variables: readingObject(code.variables),
        validations: readingObject(code.validations),
      },
    };
    const asPolicy = compilePolicy(policy);
    // Gatekeeper answers one message per failing validation: no per-element evidence, and paths
    // only where an expression reads the object itself (a variable's path may be a guess).
    compiled = {
      ...asPolicy,
      variablePaths: new Map(),
      validations: asPolicy.validations.map(({ iteration: _iteration, ...validation }) => validation),
    };
    if (policiesByContent.size >= MAX_COMPILED_TEMPLATES)
      policiesByContent.delete(policiesByContent.keys().next().value as string);
    policiesByContent.set(content, compiled);
  }
  policies.set(code, compiled);
  return compiled;
}

const NO_PARAMETERS = {};

/** `variables.params`: the constraint's spec.parameters as CEL input, converted once per constraint. */
function parametersOf(constraint: KubernetesObject): unknown {
  const spec = isRecord(constraint.spec) ? constraint.spec : NO_PARAMETERS;
  const parameters = (spec as Record<string, unknown>).parameters;
  return isRecord(parameters) || Array.isArray(parameters) ? objectAsCelInput(parameters) : null;
}

/**
 * What the template's match conditions decide for the object, or undefined when they all hold. No
 * run for a template without conditions (nearly all of them), on every admission check.
 */
function matchConditionsOutcome(
  compiled: CompiledPolicy,
  code: CelCode,
  bindings: Bindings,
  context: VerdictContext,
  preset: Record<string, unknown>,
): TemplateOutcome | undefined {
  if (compiled.matchConditions.length === 0) return undefined;
  // A copy: each run adds its own `variables`.
  const matching = new PolicyRun(compiled, withFields(bindings, {}), context.guard, preset);
  for (const condition of compiled.matchConditions) {
    const result = matching.evaluate(condition.program, condition.expression);
    if (result.ok && result.value === false) return { matched: false };
    if (!result.ok || matching.spent > RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS) {
      if (code.failurePolicy === 'Ignore') return { matched: false };
      return {
        violations: [
          {
            path: '',
            message: text`match condition ${detail(condition.name, 'of the template')} cannot be evaluated and the template fails closed`,
          },
        ],
      };
    }
  }
  return undefined;
}

export function evaluateCelTemplate(
  code: CelCode,
  templateName: string,
  constraint: KubernetesObject,
  context: VerdictContext,
): TemplateOutcome {
  const compiled = compiledTemplate(code, templateName);
  if (needsRequester(compiled))
    return {
      unknown: text`the template depends on who makes the request (request.userInfo or authorizer)`,
    };
  const { object, oldObject, namespace } = context.admitted;
  const bindings: Bindings = {
    object: admittedAsCelInput(object, context.guard),
    oldObject: oldObject ? admittedAsCelInput(oldObject, context.guard) : null,
    request: celRequestOf(context),
    params: objectAsCelInput(constraint),
    // Gatekeeper's CEL driver gives the namespace by name only.
    namespaceObject:
      namespace === ''
        ? null
        : factOfEvaluation(context.guard, 'gatekeeper-namespace-object', context.admitted, () =>
            toCelInput({ metadata: { name: namespace } }),
          ),
  };
  const preset = { params: parametersOf(constraint) };
  const excluded = matchConditionsOutcome(compiled, code, bindings, context, preset);
  if (excluded) return excluded;
  const run = new PolicyRun(compiled, bindings, context.guard, preset);
  const outcome = runValidations(compiled, run);
  if ('unsupported' in outcome) return { unknown: outcome.unsupported };
  if ('budgetExceeded' in outcome)
    return code.failurePolicy === 'Ignore'
      ? { violations: [] }
      : {
          violations: [
            {
              path: '',
              message: text`the template cannot be evaluated on it (${detail(outcome.budgetExceeded, 'an evaluation error')}) and fails closed`,
            },
          ],
        };
  return { violations: outcome.evidence };
}
