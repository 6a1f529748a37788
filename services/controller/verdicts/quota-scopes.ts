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

/** The scopes that are a property of the pod (an expression's `DoesNotExist` negates them). */
const POD_SCOPES: Record<string, (shape: PodShape) => boolean> = {
  Terminating: isTerminating,
  NotTerminating: (shape) => !isTerminating(shape),
  BestEffort: isBestEffort,
  NotBestEffort: (shape) => !isBestEffort(shape),
  CrossNamespacePodAffinity: hasCrossNamespaceAffinity,
};

function scopeHolds(scope: string, operator: string, values: readonly string[], shape: PodShape): boolean {
  if (scope === 'PriorityClass') {
    const priorityClass =
      typeof shape.spec.priorityClassName === 'string' ? shape.spec.priorityClassName : '';
    if (operator === 'In') return values.includes(priorityClass);
    if (operator === 'NotIn') return !values.includes(priorityClass);
    if (operator === 'DoesNotExist') return priorityClass === '';
    return priorityClass !== '';
  }
  // VolumeAttributesClass and future scopes count no pods.
  const property = Object.hasOwn(POD_SCOPES, scope) ? POD_SCOPES[scope] : undefined;
  if (property === undefined) return false;
  const holds = property(shape);
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
