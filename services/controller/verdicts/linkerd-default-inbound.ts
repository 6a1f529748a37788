import type { ConstraintDraft as Constraint } from '../../model/constraint';
import { isRecord } from '../../model/kubernetes';
import { detail, text } from '../../model/text';
import { podTemplateLocationOf } from '../../model/workload';
import { LINKERD_DEFAULT_INBOUND_POLICY_ANNOTATION, LINKERD_PERMISSIVE_POLICY } from '../../model/linkerd';
import { applies, NOT_APPLICABLE, type VerdictContext, type VerdictOutcome } from './types';

// Linkerd's namespace default inbound policy (`linkerd/default-inbound-policy`, from the Namespace's
// `config.linkerd.io/default-inbound-policy`) is only a default: pods that carry the same annotation
// in their own metadata (a workload's pod template) use theirs instead. Such an object is told which
// policy its pods really get: none to report when theirs is Linkerd's permissive default, otherwise
// the namespace's constraint still applies, with a reason naming the pods' own policy.

function ownPolicyOf(context: VerdictContext): string | undefined {
  const template = podTemplateLocationOf(context.admitted.object)?.template;
  const metadata = isRecord(template) ? template.metadata : undefined;
  const annotations = isRecord(metadata) ? metadata.annotations : undefined;
  const policy = isRecord(annotations) ? annotations[LINKERD_DEFAULT_INBOUND_POLICY_ANNOTATION] : undefined;
  return typeof policy === 'string' && policy.trim() !== '' ? policy.trim() : undefined;
}

export function evaluateLinkerdDefaultInbound(
  _constraint: Constraint,
  context: VerdictContext,
): VerdictOutcome {
  const own = ownPolicyOf(context);
  if (own === undefined) return applies();
  if (own === LINKERD_PERMISSIVE_POLICY) return NOT_APPLICABLE;
  return applies(
    text`its pods set their own default inbound policy ${detail(`"${own}"`, 'in their annotations')}, which Linkerd uses instead of the namespace's`,
  );
}
