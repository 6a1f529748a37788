import { isRecord } from '../../model/kubernetes';
import type { PodShape } from './pod-resources';

// Which pods a scoped ResourceQuota counts (apimachinery's quota scopes): every scope listed in
// `scopes` and every expression of `scopeSelector` must hold for the pod.

function isTerminating(shape: PodShape): boolean {
  return typeof shape.spec.activeDeadlineSeconds === 'number' && shape.spec.activeDeadlineSeconds >= 0;
}

function isBestEffort(shape: PodShape): boolean {
  return shape.containers.every(
    (container) =>
      !['cpu', 'memory'].some(
        (resource) => container.requests.has(resource) || container.limits.has(resource),
      ),
  );
}

function hasCrossNamespaceAffinity(shape: PodShape): boolean {
  const affinity = isRecord(shape.spec.affinity) ? shape.spec.affinity : {};
  return ['podAffinity', 'podAntiAffinity'].some((field) => {
    const terms = isRecord(affinity[field]) ? affinity[field] : {};
    return Object.values(terms).some(
      (list) =>
        Array.isArray(list) &&
        list.some((term) => {
          const affinityTerm = isRecord(term) && isRecord(term.podAffinityTerm) ? term.podAffinityTerm : term;
          return (
            isRecord(affinityTerm) &&
            ((Array.isArray(affinityTerm.namespaces) && affinityTerm.namespaces.length > 0) ||
              affinityTerm.namespaceSelector !== undefined)
          );
        }),
    );
  });
}

function scopeHolds(scope: string, operator: string, values: readonly string[], shape: PodShape): boolean {
  const priorityClass = typeof shape.spec.priorityClassName === 'string' ? shape.spec.priorityClassName : '';
  let holds: boolean;
  switch (scope) {
    case 'Terminating':
      holds = isTerminating(shape);
      break;
    case 'NotTerminating':
      holds = !isTerminating(shape);
      break;
    case 'BestEffort':
      holds = isBestEffort(shape);
      break;
    case 'NotBestEffort':
      holds = !isBestEffort(shape);
      break;
    case 'CrossNamespacePodAffinity':
      holds = hasCrossNamespaceAffinity(shape);
      break;
    case 'PriorityClass':
      if (operator === 'In') return values.includes(priorityClass);
      if (operator === 'NotIn') return !values.includes(priorityClass);
      if (operator === 'DoesNotExist') return priorityClass === '';
      return priorityClass !== '';
    default:
      // VolumeAttributesClass and future scopes count no pods.
      return false;
  }
  return operator === 'DoesNotExist' ? !holds : holds;
}

export function podInQuotaScope(shape: PodShape, quotaSpec: Record<string, unknown>): boolean {
  const scopes = Array.isArray(quotaSpec.scopes)
    ? quotaSpec.scopes.filter((scope) => typeof scope === 'string')
    : [];
  if (!scopes.every((scope) => scopeHolds(scope, 'Exists', [], shape))) return false;
  const selector = isRecord(quotaSpec.scopeSelector) ? quotaSpec.scopeSelector : {};
  const expressions = Array.isArray(selector.matchExpressions)
    ? selector.matchExpressions.filter(isRecord)
    : [];
  return expressions.every((expression) =>
    scopeHolds(
      typeof expression.scopeName === 'string' ? expression.scopeName : '',
      typeof expression.operator === 'string' ? expression.operator : 'Exists',
      Array.isArray(expression.values)
        ? expression.values.filter((value): value is string => typeof value === 'string')
        : [],
      shape,
    ),
  );
}
