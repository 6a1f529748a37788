import type { ConstraintDraft as Constraint } from '../../model/constraint';
import { isStringRecord, type KubernetesObject } from '../../model/kubernetes';
import { podTemplateLocationOf } from '../../model/workload';
import { text } from '../../model/text';
import { evaluatePodSecurity, isPodSecurityLevel } from './pod-security';
import { NOT_APPLICABLE, type VerdictContext, type VerdictOutcome } from './types';

// Pod Security Admission (constraints `pod-security/<mode>` from a Namespace's labels): the pod, or a
// controller's pod template, against the level and version of that mode. On a controller the API
// server rejects the pods (enforce) and warns about the template; exemptions configured in the API
// server are not visible here.

const LABEL_PREFIX = 'pod-security.kubernetes.io/';

export function evaluatePodSecurityAdmission(
  constraint: Constraint,
  namespace: KubernetesObject,
  context: VerdictContext,
): VerdictOutcome {
  const mode = constraint.name.startsWith('pod-security/')
    ? constraint.name.slice('pod-security/'.length)
    : '';
  const labels = isStringRecord(namespace.metadata?.labels) ? namespace.metadata.labels : {};
  const level = labels[`${LABEL_PREFIX}${mode}`];
  if (!isPodSecurityLevel(level)) return NOT_APPLICABLE;
  const version = labels[`${LABEL_PREFIX}${mode}-version`] ?? 'latest';
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
