import type { ConstraintDraft as Constraint } from '../../model/constraint';
import { groupOf, isRecord, type KubernetesObject } from '../../model/kubernetes';
import { compareQuantities, divideQuantities, type Quantity } from '../../model/quantity';
import { detail, text, type Text } from '../../model/text';
import { readResourceMap, type ContainerResources, type PodShape, type ResourceMap } from './pod-resources';
import {
  defaultedPods,
  namespaceDefaultedPods,
  readLimitRangeItems,
  type LimitRangeItem,
} from './admitted-pods';
import { showQuantity } from './quantity-text';
import type { Evidence, VerdictContext, VerdictOutcome } from './types';
import { NOT_APPLICABLE } from './types';

// LimitRange as the LimitRanger admission plugin enforces it: first the defaults (`default`,
// `defaultRequest`, themselves defaulted from `max` and `min` as the API server does), then per
// container and per pod `min` (request set and at least min), `max` (limit set and at most max)
// and `maxLimitRequestRatio`; PersistentVolumeClaims against `min`/`max` of storage.
// Not covered: pod-level `resources` (alpha in 1.32) and the ratio's zero-request edge cases beyond
// "a request must be set".

interface Subject {
  /** `container "web"` or `the pod`. */
  label: string;
  path: string;
  requests: ResourceMap;
  limits: ResourceMap;
  per: string;
}

function requirement(resource: string, quantity: Quantity): Text {
  return [detail(showQuantity(resource, quantity), 'the LimitRange’s figure')];
}

type ResourceField = 'requests' | 'limits';

/** `min` binds requests (and limits), `max` binds limits (and requests), each in its direction. */
const BOUNDS = [
  {
    key: 'min',
    word: 'minimum',
    required: 'requests',
    other: 'limits',
    breaks: (order: number) => order < 0,
  },
  {
    key: 'max',
    word: 'maximum',
    required: 'limits',
    other: 'requests',
    breaks: (order: number) => order > 0,
  },
] as const;

/** `requests 100m cpu` or `has a cpu limit of 1`. */
function valueText(field: ResourceField, resource: string, quantity: Quantity): Text {
  return field === 'requests'
    ? text`requests ${showQuantity(resource, quantity)} ${resource}`
    : text`has a ${resource} limit of ${showQuantity(resource, quantity)}`;
}

function checkBounds(subject: Subject, item: LimitRangeItem): Evidence[] {
  const evidence: Evidence[] = [];
  const path = `${subject.path}.resources`;
  for (const bound of BOUNDS) {
    for (const [resource, figure] of item[bound.key]) {
      const required = subject[bound.required].get(resource);
      const other = subject[bound.other].get(resource);
      // Worded only for evidence: most bounds hold, and their figure is not formatted.
      const limitText = () => text`the ${bound.word} per ${subject.per} is ${requirement(resource, figure)}`;
      if (!required)
        evidence.push({
          path: `${path}.${bound.required}.${resource}`,
          message: text`${subject.label} sets no ${resource} ${bound.required === 'requests' ? 'request' : 'limit'}; ${limitText()}`,
        });
      else if (bound.breaks(compareQuantities(required, figure)))
        evidence.push({
          path: `${path}.${bound.required}.${resource}`,
          message: text`${subject.label} ${valueText(bound.required, resource, required)}; ${limitText()}`,
        });
      if (other && bound.breaks(compareQuantities(other, figure)))
        evidence.push({
          path: `${path}.${bound.other}.${resource}`,
          message: text`${subject.label} ${valueText(bound.other, resource, other)}; ${limitText()}`,
        });
    }
  }
  for (const [resource, ratio] of item.maxLimitRequestRatio) {
    const limit = subject.limits.get(resource);
    const request = subject.requests.get(resource);
    if (!limit || !request || request.numerator === 0n) {
      evidence.push({
        path,
        message: text`${subject.label} must set both a ${resource} request and limit (the limit may be at most ${detail(showQuantity('', ratio), 'a fixed multiple')} times the request)`,
      });
      continue;
    }
    const actual = divideQuantities(limit, request);
    if (compareQuantities(actual, ratio) > 0)
      evidence.push({
        path,
        message: text`${subject.label} has a ${resource} limit ${showQuantity('', actual)} times its request; the maximum ratio is ${detail(showQuantity('', ratio), 'lower')}`,
      });
  }
  return evidence;
}

function containerSubject(container: ContainerResources): Subject {
  return {
    label: `${container.init ? 'init container' : 'container'} "${container.name}"`,
    path: container.path,
    requests: container.requests,
    limits: container.limits,
    per: 'Container',
  };
}

function checkPersistentVolumeClaim(object: KubernetesObject, items: readonly LimitRangeItem[]): Evidence[] {
  const spec = isRecord(object.spec) ? object.spec : {};
  const resources = isRecord(spec.resources) ? spec.resources : {};
  const subject: Subject = {
    label: 'the claim',
    path: 'spec',
    requests: readResourceMap(resources.requests),
    limits: readResourceMap(resources.limits),
    per: 'PersistentVolumeClaim',
  };
  return items
    .filter((item) => item.type === 'PersistentVolumeClaim')
    .flatMap((item) =>
      checkBounds({ ...subject, limits: new Map([...subject.requests, ...subject.limits]) }, item),
    );
}

/**
 * The API server validates the Pod after LimitRanger filled its defaults: a request above its limit
 * is invalid ("must be less than or equal to cpu limit of 500m"). Said of this LimitRange when one
 * of the two figures is its default: a container requesting 700m cpu with no limit, under a
 * `default.cpu: 500m`, is rejected although it breaks no min or max.
 */
function defaultedRequestAboveLimit(container: ContainerResources, limitRangeName: string): Evidence[] {
  const evidence: Evidence[] = [];
  for (const [resource, request] of container.requests) {
    const limit = container.limits.get(resource);
    if (!limit || compareQuantities(request, limit) <= 0) continue;
    const limitDefaulted = container.defaulted.get(`limits.${resource}`) === limitRangeName;
    const requestDefaulted = container.defaulted.get(`requests.${resource}`) === limitRangeName;
    if (!limitDefaulted && !requestDefaulted) continue;
    const limitText = showQuantity(resource, limit);
    const requestText = showQuantity(resource, request);
    evidence.push({
      path: `${container.path}.resources.requests.${resource}`,
      message: limitDefaulted
        ? text`${containerSubject(container).label} requests ${requestText} ${resource} and sets no limit: the default limit ${detail(limitText, 'the LimitRange sets')} is filled in, and the API server refuses a request above its limit (must be less than or equal to ${resource} limit of ${detail(limitText, 'the default')})`
        : text`${containerSubject(container).label} has a ${resource} limit of ${limitText} and sets no request: the default request ${detail(requestText, 'the LimitRange sets')} is filled in, and the API server refuses a request above its limit (must be less than or equal to ${resource} limit of ${limitText})`,
    });
  }
  return evidence;
}

function defaultsNote(shape: PodShape, limitRangeName: string): Text | undefined {
  const notes = shape.containers.flatMap((container) => {
    const set = [...container.defaulted].filter(([, from]) => from === limitRangeName);
    if (set.length === 0) return [];
    const values = set.map(([key]) => {
      const [kind, resource] = [key.slice(0, key.indexOf('.')), key.slice(key.indexOf('.') + 1)];
      const value = (kind === 'requests' ? container.requests : container.limits).get(resource);
      return `${key}=${value ? showQuantity(resource, value) : '?'}`;
    });
    return [`container "${container.name}" ${values.join(', ')}`];
  });
  return notes.length === 0
    ? undefined
    : [detail(`will set defaults: ${notes.join('; ')}`, 'will set default requests or limits')];
}

export function evaluateLimitRange(
  _constraint: Constraint,
  source: KubernetesObject,
  context: VerdictContext,
): VerdictOutcome {
  const object = context.admitted.object;
  const items = readLimitRangeItems(source);
  if (object.kind === 'PersistentVolumeClaim') {
    const evidence = checkPersistentVolumeClaim(object, items);
    return evidence.length > 0
      ? { verdict: 'violates', evidence, rejects: 'object' }
      : { verdict: 'passes', evidence: [] };
  }
  const limitRanges = context.index.listInNamespace('', 'LimitRange', context.admitted.namespace);
  const sourceName = source.metadata?.name;
  // The source is one of the namespace's LimitRanges, unless the index lacks it (a manifest checked alone).
  const pods = limitRanges.some((limitRange) => limitRange.metadata?.name === sourceName)
    ? namespaceDefaultedPods(object, context)
    : defaultedPods(object, [...limitRanges, source], context.guard);
  if (!pods) return NOT_APPLICABLE;
  const { shape, totals } = pods;
  const evidence: Evidence[] = [];
  for (const container of shape.containers)
    evidence.push(...defaultedRequestAboveLimit(container, sourceName ?? ''));
  for (const item of items) {
    if (item.type === 'Container')
      for (const container of shape.containers) {
        context.guard.checkpoint();
        evidence.push(...checkBounds(containerSubject(container), item));
      }
    if (item.type === 'Pod')
      evidence.push(
        ...checkBounds(
          {
            label: 'the pod',
            path: shape.specPath,
            requests: totals.requests,
            limits: totals.limits,
            per: 'Pod',
          },
          item,
        ),
      );
  }
  const note = defaultsNote(shape, source.metadata?.name ?? '');
  if (evidence.length > 0)
    return {
      verdict: 'violates',
      evidence,
      // A bare Pod is itself refused; a workload is admitted and its pods are refused.
      rejects: object.kind === 'Pod' && groupOf(object.apiVersion) === '' ? 'object' : 'pods',
      ...(note ? { reason: note } : {}),
    };
  return { verdict: 'passes', evidence: [], ...(note ? { reason: note } : {}) };
}
