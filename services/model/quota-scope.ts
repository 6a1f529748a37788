import { groupOf, isRecord, type KubernetesObject } from './kubernetes';
import { podTemplateOf, workloadKind } from './workload-kinds';

// ResourceQuota scopes (`spec.scopes`, `spec.scopeSelector`): which pods a quota counts. A scoped
// quota applies only to objects in its scope (DESIGN.md section 3): a quota for PriorityClass `high`
// says nothing to a pod without that class. Pure, so the list query, `check` and the verdicts
// evaluator decide it the same way.

export const QUOTA_SCOPE_NAMES = [
  'Terminating',
  'NotTerminating',
  'BestEffort',
  'NotBestEffort',
  'PriorityClass',
  'CrossNamespacePodAffinity',
  'VolumeAttributesClass',
] as const;
export type QuotaScopeName = (typeof QUOTA_SCOPE_NAMES)[number];

export interface QuotaScopeRequirement {
  scopeName: QuotaScopeName;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  /** For In / NotIn (PriorityClass names, VolumeAttributesClass names). */
  values?: string[];
}

function at(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) current = isRecord(current) ? current[key] : undefined;
  return current;
}

function containersOf(podSpec: unknown): Array<Record<string, unknown>> {
  return ['containers', 'initContainers']
    .flatMap((field) => {
      const list = at(podSpec, [field]);
      return Array.isArray(list) ? list : [];
    })
    .filter(isRecord);
}

/** BestEffort QoS: no container sets any request or limit. */
function isBestEffort(podSpec: unknown): boolean {
  return containersOf(podSpec).every((container) => {
    const requests = at(container, ['resources', 'requests']);
    const limits = at(container, ['resources', 'limits']);
    return (
      (!isRecord(requests) || Object.keys(requests).length === 0) &&
      (!isRecord(limits) || Object.keys(limits).length === 0)
    );
  });
}

function hasCrossNamespaceAffinity(podSpec: unknown): boolean {
  const terms = ['podAffinity', 'podAntiAffinity'].flatMap((kind) =>
    [
      'requiredDuringSchedulingIgnoredDuringExecution',
      'preferredDuringSchedulingIgnoredDuringExecution',
    ].flatMap((field) => {
      const list = at(podSpec, ['affinity', kind, field]);
      return Array.isArray(list) ? list : [];
    }),
  );
  return terms.some((term) => {
    const affinityTerm = isRecord(term) && isRecord(term.podAffinityTerm) ? term.podAffinityTerm : term;
    return (
      isRecord(affinityTerm) &&
      (affinityTerm.namespaces !== undefined || affinityTerm.namespaceSelector !== undefined)
    );
  });
}

function podMatches(podSpec: unknown, requirement: QuotaScopeRequirement): boolean {
  const priorityClass = at(podSpec, ['priorityClassName']);
  switch (requirement.scopeName) {
    case 'Terminating':
      return typeof at(podSpec, ['activeDeadlineSeconds']) === 'number';
    case 'NotTerminating':
      return typeof at(podSpec, ['activeDeadlineSeconds']) !== 'number';
    case 'BestEffort':
      return isBestEffort(podSpec);
    case 'NotBestEffort':
      return !isBestEffort(podSpec);
    case 'CrossNamespacePodAffinity':
      return hasCrossNamespaceAffinity(podSpec);
    case 'VolumeAttributesClass':
      // Counts PersistentVolumeClaims only; a pod is never in this scope.
      return false;
    case 'PriorityClass': {
      const name = typeof priorityClass === 'string' && priorityClass !== '' ? priorityClass : undefined;
      const values = requirement.values ?? [];
      if (requirement.operator === 'Exists') return name !== undefined;
      if (requirement.operator === 'DoesNotExist') return name === undefined;
      if (requirement.operator === 'In') return name !== undefined && values.includes(name);
      return name === undefined || !values.includes(name);
    }
  }
}

/**
 * Whether an object falls in a scoped quota: its pods (a Pod, or a controller's pod template) meet
 * every requirement. Objects without pods are in no pod scope. No requirements: every object.
 */
export function objectInQuotaScope(
  object: KubernetesObject,
  requirements: readonly QuotaScopeRequirement[] | undefined,
): boolean {
  if (requirements === undefined || requirements.length === 0) return true;
  const entry = workloadKind(groupOf(object.apiVersion), object.kind ?? '');
  if (entry === undefined) return false;
  const podSpec = at(podTemplateOf(object, entry), ['spec']);
  return requirements.every((requirement) => podMatches(podSpec, requirement));
}

/** `pods with PriorityClass high`, `BestEffort pods`, as the summary's "counts only ..." clause. */
export function describeQuotaScope(requirements: readonly QuotaScopeRequirement[]): string {
  const parts = requirements.map((requirement) => {
    const values = (requirement.values ?? []).join(', ');
    switch (requirement.scopeName) {
      case 'PriorityClass':
        if (requirement.operator === 'Exists') return 'pods with a PriorityClass';
        if (requirement.operator === 'DoesNotExist') return 'pods without a PriorityClass';
        return requirement.operator === 'In'
          ? `pods with PriorityClass ${values}`
          : `pods without PriorityClass ${values}`;
      case 'VolumeAttributesClass':
        return requirement.operator === 'In'
          ? `PersistentVolumeClaims with VolumeAttributesClass ${values}`
          : 'PersistentVolumeClaims by VolumeAttributesClass';
      case 'BestEffort':
        return 'BestEffort pods (no requests or limits)';
      case 'NotBestEffort':
        return 'pods that set requests or limits';
      case 'Terminating':
        return 'pods with activeDeadlineSeconds';
      case 'NotTerminating':
        return 'pods without activeDeadlineSeconds';
      case 'CrossNamespacePodAffinity':
        return 'pods with cross-namespace affinity terms';
    }
  });
  return parts.join(' and ');
}
