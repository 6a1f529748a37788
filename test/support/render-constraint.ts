import type { AdapterContext, ConstraintDraft } from '../../services/model/constraint';
import type { KubernetesObject } from '../../services/model/kubernetes';
import { renderText, type Viewer } from '../../services/model/text';

/**
 * Every human-readable text of a constraint rendered for one viewer, one per line: what a privacy
 * test must search for leaks (name, summary, hint, remediation text and commands).
 */
export function renderConstraintTexts(constraint: ConstraintDraft, viewer: Viewer): string {
  const texts = [
    constraint.displayName,
    constraint.summary,
    constraint.remediationHint,
    constraint.remediation.summary,
    ...constraint.remediation.steps.flatMap((step) => [
      step.description,
      ...(step.command ? [step.command] : []),
    ]),
  ];
  return texts.map((value) => renderText(value, viewer)).join('\n');
}

/** An adapter context for unit tests whose lookups find objects among `related` by group, kind, namespace (and name). */
export function testAdapterContext(related: ReadonlyArray<KubernetesObject> = []): AdapterContext {
  const sameKind = (
    object: KubernetesObject,
    group: string,
    kind: string,
    namespace: string | null | undefined,
  ) =>
    (object.apiVersion ?? '').startsWith(group === '' ? 'v1' : `${group}/`) &&
    object.kind === kind &&
    (namespace === undefined || (object.metadata?.namespace ?? null) === namespace);
  return {
    lookupAll: ({ group, kind }, namespace) =>
      related.filter((object) => sameKind(object, group, kind, namespace)),
    defaultContact: 'platform-team@example.com',
    ownWebhookName: 'forewarn-webhook',
    meshRootNamespace: 'istio-system',
    lookup: ({ group, kind }, namespace, name) =>
      related.find((object) => sameKind(object, group, kind, namespace) && object.metadata?.name === name),
  };
}
