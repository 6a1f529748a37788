import type { ConstraintDraft as Constraint } from '../../model/constraint';
import { exemptRuntimeClassesOfTags, podSecurityPolicyOfTags } from '../../model/pod-security';
import { isRecord } from '../../model/kubernetes';
import { podTemplateLocationOf } from '../../model/workload';
import { detail, text } from '../../model/text';
import { evaluatePodSecurity } from './pod-security';
import { NOT_APPLICABLE, unknown, type VerdictContext, type VerdictOutcome } from './types';

// Pod Security Admission (constraints `pod-security/<mode>` of the podsecurity adapter): the pod, or a
// controller's pod template, against the level and version of that mode. Both come from the
// constraint's tags, not from the namespace's labels: the adapter already resolved the cluster default
// (`--pod-security-default`) and the invalid-level rule (restricted) into them. On a controller the API
// server rejects the pods (enforce) and warns about the template. Exemptions are visible only as far as
// the operator told the controller (`--pod-security-exempt-*`): a pod whose runtime class is exempt
// passes; exempt usernames depend on the requester and are not known here.

export function evaluatePodSecurityAdmission(
  constraint: Constraint,
  context: VerdictContext,
): VerdictOutcome {
  const policy = podSecurityPolicyOfTags(constraint.tags);
  if (!policy) return unknown(text`the constraint names no Pod Security level`);
  const { level, version } = policy;
  const location = podTemplateLocationOf(context.admitted.object);
  if (!location) return NOT_APPLICABLE;
  const rule = text`PodSecurity "${level}:${version}"`;
  const runtimeClass = isRecord(location.template.spec) ? location.template.spec.runtimeClassName : undefined;
  if (typeof runtimeClass === 'string' && exemptRuntimeClassesOfTags(constraint.tags).includes(runtimeClass))
    return {
      verdict: 'passes',
      evidence: [],
      rule,
      reason: text`its runtime class ${detail(runtimeClass, 'one the cluster exempts')} is exempt from Pod Security Admission`,
    };
  const failures = evaluatePodSecurity(location.template, level, version, {
    pathPrefix: location.path.join('.'),
    guard: context.guard,
  });
  if (failures.length === 0) return { verdict: 'passes', evidence: [], rule };
  return {
    verdict: 'violates',
    evidence: failures.map((failure) => ({ path: failure.path, message: [failure.message] })),
    rejects: context.admitted.object.kind === 'Pod' ? 'object' : 'pods',
    rule,
  };
}
