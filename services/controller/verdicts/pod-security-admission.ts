import type { ConstraintDraft as Constraint } from '../../model/constraint';
import { podSecurityPolicyOfTags } from '../../model/pod-security';
import { podTemplateLocationOf } from '../../model/workload';
import { text } from '../../model/text';
import { evaluatePodSecurity } from './pod-security';
import { NOT_APPLICABLE, unknown, type VerdictContext, type VerdictOutcome } from './types';

// Pod Security Admission (constraints `pod-security/<mode>` of the podsecurity adapter): the pod, or a
// controller's pod template, against the level and version of that mode. Both come from the
// constraint's tags, not from the namespace's labels: the adapter already resolved the cluster default
// (`--pod-security-default`) and the invalid-level rule (restricted) into them. On a controller the API
// server rejects the pods (enforce) and warns about the template; exemptions configured in the API
// server are not visible here.

export function evaluatePodSecurityAdmission(
  constraint: Constraint,
  context: VerdictContext,
): VerdictOutcome {
  const policy = podSecurityPolicyOfTags(constraint.tags);
  if (!policy) return unknown(text`the constraint names no Pod Security level`);
  const { level, version } = policy;
  const location = podTemplateLocationOf(context.admitted.object);
  if (!location) return NOT_APPLICABLE;
  const failures = evaluatePodSecurity(location.template, level, version, {
    pathPrefix: location.path.join('.'),
  });
  const rule = text`PodSecurity "${level}:${version}"`;
  if (failures.length === 0) return { verdict: 'passes', evidence: [], rule };
  return {
    verdict: 'violates',
    evidence: failures.map((failure) => ({ path: failure.path, message: [failure.message] })),
    rejects: context.admitted.object.kind === 'Pod' ? 'object' : 'pods',
    rule,
  };
}
