import type { ConstraintDraft as Constraint } from '../../../model/constraint';
import { isRecord, type KubernetesObject } from '../../../model/kubernetes';
import { detail, objectName, text } from '../../../model/text';
import { autogenControllersOf, isAutogenApiVersion } from '../../../model/kyverno-autogen';
import { NOT_APPLICABLE, unknown, type VerdictContext, type VerdictOutcome } from '../types';
import { celValidations, evaluateCelParts, namedExpressions } from './kyverno-cel-rule';
import { KyvernoRuleError, NotEvaluable } from './kyverno-errors';
import { subjectOf } from './rule-subject';

// A policies.kyverno.io ValidatingPolicy on one object (https://kyverno.io/docs/policy-types/validating-policy/):
// matchConstraints' operations, matchConditions, variables and validations with their messages, in
// Kyverno's CEL environment (kyverno-cel-rule.ts). A pod controller is checked through its pod
// template when Kyverno auto-generates the policy for it (all six controllers unless
// spec.autogen.podControllers.controllers says otherwise), as the generated policy rewrites
// `object.spec` and `object.metadata` to the template's, but for `object.metadata.namespace`.

const CONTROLLER_RESOURCES: Readonly<Record<string, string>> = {
  Deployment: 'deployments',
  StatefulSet: 'statefulsets',
  DaemonSet: 'daemonsets',
  ReplicaSet: 'replicasets',
  Job: 'jobs',
  CronJob: 'cronjobs',
};

function operationAllowed(spec: Record<string, unknown>, operation: string): boolean {
  const match = isRecord(spec.matchConstraints) ? spec.matchConstraints : {};
  const rules = Array.isArray(match.resourceRules) ? match.resourceRules.filter(isRecord) : [];
  if (rules.length === 0) return true;
  return rules.some(
    (rule) =>
      !Array.isArray(rule.operations) || rule.operations.includes('*') || rule.operations.includes(operation),
  );
}

export function evaluateValidatingPolicy(
  constraint: Constraint,
  policy: KubernetesObject,
  context: VerdictContext,
): VerdictOutcome {
  if (!constraint.source.apiVersion.startsWith('policies.kyverno.io/'))
    return unknown(text`this kind of policy is not evaluated here`);
  const spec = isRecord(policy.spec) ? policy.spec : {};
  if (!operationAllowed(spec, context.admitted.operation)) return NOT_APPLICABLE;
  if (spec.paramKind !== undefined || spec.paramRef !== undefined)
    return unknown(text`the policy reads params, which are not evaluated here`);
  const object = context.admitted.object;
  const controllerResource = CONTROLLER_RESOURCES[object.kind ?? ''];
  const throughTemplate =
    controllerResource !== undefined && autogenControllersOf(spec).includes(controllerResource);
  // The policy reaches a controller only through the policy Kyverno generates for its v1 kind.
  if (throughTemplate && !isAutogenApiVersion(object.kind, object.apiVersion)) return NOT_APPLICABLE;
  const subject = subjectOf(
    throughTemplate ? ['Pod'] : [object.kind ?? ''],
    object,
    'metadata-but-namespace',
  );
  const rule = text`Kyverno ValidatingPolicy "${objectName(constraint.source.name, null)}"`;
  try {
    const result = evaluateCelParts(
      {
        matchConditions: namedExpressions(spec.matchConditions),
        variables: namedExpressions(spec.variables),
        validations: celValidations(spec.validations),
      },
      subject.value,
      subject.prefix,
      context,
    );
    if (result.kind === 'fail')
      return { verdict: 'violates', evidence: result.evidence, rejects: 'object', rule };
    if (result.kind === 'pass') return { verdict: 'passes', evidence: [], rule };
    return NOT_APPLICABLE;
  } catch (error) {
    if (error instanceof NotEvaluable)
      return unknown(
        text`the policy is not evaluated here: ${detail(error.message, 'it needs data Forewarn lacks')}`,
      );
    if (error instanceof KyvernoRuleError)
      return unknown(
        text`Kyverno reports an error rather than pass or fail: ${detail(error.message, 'an evaluation error')}`,
      );
    throw error;
  }
}
