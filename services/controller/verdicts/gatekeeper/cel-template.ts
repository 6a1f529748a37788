import type { CelCode } from '../../../model/gatekeeper';
import type { KubernetesObject } from '../../../model/kubernetes';
import { detail, text } from '../../../model/text';
import { NEEDS_REQUESTER, PolicyRun, requestOf, runValidations, type Bindings } from '../admission-policy';
import { objectAsCelInput, toCelInput } from '../cel/cel-program';
import { compilePolicy, type CompiledPolicy } from '../cel/compiled-policy';
import { RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS } from '../cel/runtime-cost';
import type { VerdictContext } from '../types';
import type { TemplateOutcome } from './template-outcome';

// A template's K8sNativeValidation code as Gatekeeper's CEL driver runs it: a ValidatingAdmissionPolicy
// whose `params` is the constraint itself, with two variables Gatekeeper prepends — `params`, the
// constraint's spec.parameters, and `anyObject`, the object (the old object on DELETE) — before the
// template's own; then match conditions, validations with message/messageExpression, failurePolicy,
// under Kubernetes' CEL cost limits (the shared evaluator of admission-policy.ts).

const GATEKEEPER_VARIABLES = [
  {
    name: 'params',
    expression: '!has(params.spec) ? null : !has(params.spec.parameters) ? null : params.spec.parameters',
  },
  {
    name: 'anyObject',
    expression:
      'has(request.operation) && request.operation == "DELETE" && object == null ? oldObject : object',
  },
];

// One synthetic policy per template code: compilePolicy caches its programs on that object.
const policies = new WeakMap<CelCode, CompiledPolicy>();

function compiledTemplate(code: CelCode, templateName: string): CompiledPolicy {
  let compiled = policies.get(code);
  if (!compiled) {
    const policy: KubernetesObject = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: templateName },
      spec: {
        failurePolicy: code.failurePolicy,
        matchConditions: code.matchConditions,
        variables: [...GATEKEEPER_VARIABLES, ...code.variables],
        validations: code.validations,
      },
    };
    compiled = compilePolicy(policy);
    policies.set(code, compiled);
  }
  return compiled;
}

export function evaluateCelTemplate(
  code: CelCode,
  templateName: string,
  constraint: KubernetesObject,
  context: VerdictContext,
): TemplateOutcome {
  const compiled = compiledTemplate(code, templateName);
  if (compiled.sources.some((source) => NEEDS_REQUESTER.test(source)))
    return {
      unknown: text`the template depends on who makes the request (request.userInfo or authorizer)`,
    };
  const { object, oldObject, namespace } = context.admitted;
  const bindings: Bindings = {
    object: objectAsCelInput(object, context.guard),
    oldObject: oldObject ? objectAsCelInput(oldObject, context.guard) : null,
    request: requestOf(context),
    params: toCelInput(constraint),
    // Gatekeeper's CEL driver gives the namespace by name only.
    namespaceObject: namespace === '' ? null : { metadata: { name: namespace } },
  };
  const matching = new PolicyRun(compiled, { ...bindings }, context.guard);
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
  const run = new PolicyRun(compiled, bindings, context.guard);
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
