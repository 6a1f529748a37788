import { AdapterParseError, type ConstraintDraft, type NamespaceScope } from '../../../model/constraint';
import type { KubernetesObject } from '../../../model/kubernetes';
import { kindsInPlural } from '../../../model/summary-rules';
import { detail, objectName, text, type Text } from '../../../model/text';
import { requireSpec, sourceOf } from '../shared/object-fields';
import { askOwnerStep, inspectSourceStep, ownerPrivilege } from '../shared/remediation';
import { clusterScope, quoted, uniqueSorted } from '../shared/scope-text';
import { deletingOutcome, readRequiredSchedule } from './kyverno-cel';
import { policyEngineDraft } from './engine-draft';
import { readExcludedNamespaces, readMatch } from './kyverno-match';

// kyverno.io/v2 ClusterCleanupPolicy (cluster-scoped) and CleanupPolicy (namespaced): Kyverno deletes
// the existing objects that match (and meet `conditions`) on the policy's cron schedule. Not an
// admission check at all, which is why it surprises: one Warning constraint, effect `delete`.

export const CLEANUP_KINDS = ['ClusterCleanupPolicy', 'CleanupPolicy'] as const;

export function kyvernoCleanupPolicyToConstraints(object: KubernetesObject): ConstraintDraft[] {
  if (!CLEANUP_KINDS.some((kind) => kind === object.kind))
    throw new AdapterParseError(`kind ${quoted(object.kind)} is not a Kyverno cleanup policy`);
  const clusterWide = object.kind === 'ClusterCleanupPolicy';
  const source = sourceOf(object, !clusterWide);
  const spec = requireSpec(object);
  const schedule = readRequiredSchedule(spec);
  const matched = readMatch(spec.match, 'spec.match');
  const excluded = readExcludedNamespaces(spec.exclude, 'spec.exclude', matched);
  const scope: NamespaceScope =
    source.namespace === null
      ? clusterScope(matched.namespaces, excluded, matched.namespaceSelector)
      : { kind: 'namespace', namespace: source.namespace };
  const kinds = uniqueSorted((matched.kindNames ?? []).map((kind) => kind.split('/').pop() ?? kind));
  const objects: Text =
    kinds.length === 0 || kinds.includes('*')
      ? text`objects`
      : [detail(kindsInPlural(kinds), 'selected objects')];
  const policy = objectName(source.name, source.namespace);
  const outcome = deletingOutcome(text`Kyverno ${source.kind} "${policy}"`, objects, schedule);
  return [
    policyEngineDraft({
      id: 'cleanup',
      name: source.name,
      displayName: [policy],
      source,
      scope,
      outcome,
      steps: [
        inspectSourceStep(source, clusterWide ? 'clustercleanuppolicy' : 'cleanuppolicy'),
        askOwnerStep(
          text`Ask the owner of Kyverno ${source.kind} "${policy}" to exclude your objects if they must survive its runs`,
          ownerPrivilege(source),
        ),
      ],
      workloadSelector: matched.selector,
      resourceTargets: matched.targets,
    }),
  ];
}
