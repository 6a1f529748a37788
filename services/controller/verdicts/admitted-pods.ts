import { isRecord, type KubernetesObject } from '../../model/kubernetes';
import type { EvaluationGuard } from './guard/evaluation-guard';
import {
  podShapeOf,
  podTotalsOf,
  readResourceMap,
  sharedIfEmpty,
  type PodShape,
  type PodTotals,
  type ReadonlyResourceMap,
} from './pod-resources';
import type { VerdictContext } from './types';
import { factOfEvaluation } from './evaluation-memo';

// The pods an admitted object creates, as the quota and limit-range admission plugins see them: the
// containers with the namespace's LimitRange defaults applied (LimitRanger runs before ResourceQuota),
// and one pod's totals. A namespace has several quotas and limit ranges; the pods are read once per
// object per evaluation (one evaluation is one guard) and shared by all of them, read-only.

/** A LimitRange item's bounds: kept as long as the LimitRange, read-only (empty ones shared). */
export interface LimitRangeItem {
  type: string;
  max: ReadonlyResourceMap;
  min: ReadonlyResourceMap;
  default: ReadonlyResourceMap;
  defaultRequest: ReadonlyResourceMap;
  maxLimitRequestRatio: ReadonlyResourceMap;
}

// One parse per LimitRange revision: the index keeps one object per revision, and the parse lives
// as long as it. Most items set two or three of the five bounds: the empty ones are one shared map
// (a Map's table is ~180 bytes even empty: 3 MiB for 5,000 LimitRanges at cluster scale).
const parsedItems = new WeakMap<KubernetesObject, LimitRangeItem[]>();

/** Items with the API server's defaulting: default ← max, defaultRequest ← default, then ← min. */
export function readLimitRangeItems(limitRange: KubernetesObject): LimitRangeItem[] {
  const cached = parsedItems.get(limitRange);
  if (cached) return cached;
  const items = parseLimitRangeItems(limitRange);
  parsedItems.set(limitRange, items);
  return items;
}

function parseLimitRangeItems(limitRange: KubernetesObject): LimitRangeItem[] {
  const spec = isRecord(limitRange.spec) ? limitRange.spec : {};
  const limits = Array.isArray(spec.limits) ? spec.limits.filter(isRecord) : [];
  return limits.map((item) => {
    const parsed = {
      type: typeof item.type === 'string' ? item.type : '',
      max: readResourceMap(item.max),
      min: readResourceMap(item.min),
      default: readResourceMap(item.default),
      defaultRequest: readResourceMap(item.defaultRequest),
      maxLimitRequestRatio: readResourceMap(item.maxLimitRequestRatio),
    };
    if (parsed.type === 'Container') {
      for (const [resource, value] of parsed.max)
        if (!parsed.default.has(resource)) parsed.default.set(resource, value);
      for (const [resource, value] of parsed.default)
        if (!parsed.defaultRequest.has(resource)) parsed.defaultRequest.set(resource, value);
      for (const [resource, value] of parsed.min)
        if (!parsed.defaultRequest.has(resource)) parsed.defaultRequest.set(resource, value);
    }
    return {
      type: parsed.type,
      max: sharedIfEmpty(parsed.max),
      min: sharedIfEmpty(parsed.min),
      default: sharedIfEmpty(parsed.default),
      // Usually the defaults alone, copied into defaultRequest: then one map for both.
      defaultRequest: sameEntries(parsed.defaultRequest, parsed.default)
        ? sharedIfEmpty(parsed.default)
        : sharedIfEmpty(parsed.defaultRequest),
      maxLimitRequestRatio: sharedIfEmpty(parsed.maxLimitRequestRatio),
    };
  });
}

function sameEntries(map: ReadonlyResourceMap, other: ReadonlyResourceMap): boolean {
  if (map.size !== other.size) return false;
  for (const [resource, value] of map) if (other.get(resource) !== value) return false;
  return true;
}

/** Fills unset requests and limits from the namespace's LimitRanges, in order, as LimitRanger does. */
export function applyLimitRangeDefaults(
  shape: PodShape,
  limitRanges: readonly KubernetesObject[],
  guard?: EvaluationGuard,
): void {
  for (const limitRange of limitRanges) {
    const name = limitRange.metadata?.name ?? '';
    for (const item of readLimitRangeItems(limitRange)) {
      if (item.type !== 'Container') continue;
      for (const container of shape.containers) {
        guard?.checkpoint();
        for (const [resource, value] of item.defaultRequest)
          if (!container.requests.has(resource)) {
            container.requests.set(resource, value);
            container.defaulted.set(`requests.${resource}`, name);
          }
        for (const [resource, value] of item.default)
          if (!container.limits.has(resource)) {
            container.limits.set(resource, value);
            container.defaulted.set(`limits.${resource}`, name);
          }
      }
    }
  }
}

export interface DefaultedPods {
  /** Read-only: every quota and limit range of the evaluation sees the same shape. */
  shape: PodShape;
  totals: PodTotals;
}

/** The object's pods, defaulted by these LimitRanges (in this order); undefined for kinds without pods. */
export function defaultedPods(
  object: KubernetesObject,
  limitRanges: readonly KubernetesObject[],
  guard: EvaluationGuard,
): DefaultedPods | undefined {
  const shape = podShapeOf(object, guard);
  if (!shape) return undefined;
  applyLimitRangeDefaults(shape, limitRanges, guard);
  return { shape, totals: podTotalsOf(shape.containers) };
}

/**
 * The pods of the admitted (or old) object with the LimitRanges of the admission's namespace, read
 * once per evaluation.
 */
export function namespaceDefaultedPods(
  object: KubernetesObject,
  context: VerdictContext,
): DefaultedPods | undefined {
  return factOfEvaluation(context.guard, 'namespace-defaulted-pods', object, () =>
    defaultedPods(
      object,
      context.index.listInNamespace('', 'LimitRange', context.admitted.namespace),
      context.guard,
    ),
  );
}
