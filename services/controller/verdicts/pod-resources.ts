import { isRecord, type KubernetesObject } from '../../model/kubernetes';
import {
  addQuantities,
  maxQuantity,
  parseQuantity,
  QuantityError,
  type Quantity,
} from '../../model/quantity';
import { podTemplateLocationOf } from '../../model/workload';
import { podCountOf, workloadKindNamed } from '../../model/workload-kinds';
import type { EvaluationGuard } from './guard/evaluation-guard';

// The compute resources of the pods an object creates, as the API server sees them at admission:
// a container's unset request defaults to its limit (API defaulting), then LimitRanges fill what is
// still unset (the LimitRanger plugin runs before ResourceQuota), then the pod's totals are the sum
// of its containers or the largest init container, whichever is larger (the scheduler's rule,
// which ResourceQuota and LimitRange also use).

export type ResourceMap = Map<string, Quantity>;
export type ReadonlyResourceMap = ReadonlyMap<string, Quantity>;

/** The one empty map that parses kept for long (LimitRange and quota figures) share. */
export const NO_RESOURCES: ReadonlyResourceMap = new Map<string, Quantity>();

/** `map`, or the shared empty map when it is empty: a parse kept per object holds no empty tables. */
export function sharedIfEmpty(map: ReadonlyResourceMap): ReadonlyResourceMap {
  return map.size === 0 ? NO_RESOURCES : map;
}

export interface ContainerResources {
  /** `spec.template.spec.containers[1]`. */
  path: string;
  name: string;
  init: boolean;
  requests: ResourceMap;
  limits: ResourceMap;
  /** Resources a LimitRange defaulted: `requests.cpu` → the LimitRange's name. */
  defaulted: Map<string, string>;
}

export interface PodShape {
  /** `spec.template` for a Deployment, `` for a Pod. */
  templatePath: string;
  /** The pod spec's own path: `spec.template.spec`, `spec`. */
  specPath: string;
  spec: Record<string, unknown>;
  metadata: Record<string, unknown>;
  containers: ContainerResources[];
  /** How many pods the object asks for at once: replicas, a Job's parallelism, 1 for a Pod. */
  podCount: number;
  /** A DaemonSet runs one pod per node; the count of nodes is not known here. */
  countIsPerNode: boolean;
}

/** `{cpu: '100m', ...}` → quantities; a figure that does not parse is left out. */
export function readResourceMap(value: unknown, guard?: EvaluationGuard): ResourceMap {
  const map: ResourceMap = new Map();
  if (!isRecord(value)) return map;
  for (const [resource, raw] of Object.entries(value)) {
    guard?.checkpoint();
    if (typeof raw !== 'string' && typeof raw !== 'number') continue;
    try {
      map.set(resource, parseQuantity(String(raw)));
    } catch (error) {
      // The API server rejects an unparsable quantity itself; it is not ours to judge here.
      if (!(error instanceof QuantityError)) throw error;
    }
  }
  return map;
}

function readContainers(
  spec: Record<string, unknown>,
  specPath: string,
  field: string,
  guard: EvaluationGuard | undefined,
): ContainerResources[] {
  const list = spec[field];
  if (!Array.isArray(list)) return [];
  return list.filter(isRecord).map((container, position) => {
    guard?.checkpoint();
    const resources = isRecord(container.resources) ? container.resources : {};
    const requests = readResourceMap(resources.requests, guard);
    const limits = readResourceMap(resources.limits, guard);
    // API defaulting: an unset request takes the limit's value.
    for (const [resource, limit] of limits) if (!requests.has(resource)) requests.set(resource, limit);
    return {
      path: `${specPath}.${field}[${position}]`,
      name: typeof container.name === 'string' ? container.name : `#${position}`,
      init: field === 'initContainers',
      requests,
      limits,
      defaulted: new Map(),
    };
  });
}

/**
 * The pods of an object; undefined for kinds that create none. The guard is checked once per
 * container and resource: their number is the caller's.
 */
export function podShapeOf(object: KubernetesObject, guard?: EvaluationGuard): PodShape | undefined {
  const location = podTemplateLocationOf(object);
  if (!location) return undefined;
  const templatePath = location.path.join('.');
  const specPath = templatePath ? `${templatePath}.spec` : 'spec';
  const spec = isRecord(location.template.spec) ? location.template.spec : {};
  return {
    templatePath,
    specPath,
    spec,
    metadata: isRecord(location.template.metadata) ? location.template.metadata : {},
    containers: [
      ...readContainers(spec, specPath, 'initContainers', guard),
      ...readContainers(spec, specPath, 'containers', guard),
    ],
    podCount: podCountOf(object),
    countIsPerNode: workloadKindNamed(object.kind ?? '')?.podsPerNode === true,
  };
}

export interface PodTotals {
  requests: ResourceMap;
  limits: ResourceMap;
}

function sumInto(total: ResourceMap, values: ResourceMap): void {
  for (const [resource, value] of values) {
    const current = total.get(resource);
    total.set(resource, current ? addQuantities(current, value) : value);
  }
}

function maxInto(total: ResourceMap, values: ResourceMap): void {
  for (const [resource, value] of values) {
    const current = total.get(resource);
    total.set(resource, current ? maxQuantity(current, value) : value);
  }
}

/** One pod's requests and limits: sum of the containers, at least the largest init container. */
export function podTotalsOf(containers: readonly ContainerResources[]): PodTotals {
  const requests: ResourceMap = new Map();
  const limits: ResourceMap = new Map();
  for (const container of containers)
    if (!container.init) {
      sumInto(requests, container.requests);
      sumInto(limits, container.limits);
    }
  for (const container of containers)
    if (container.init) {
      maxInto(requests, container.requests);
      maxInto(limits, container.limits);
    }
  return { requests, limits };
}

/** The containers (init ones included) that do not set this request or limit. */
export function containersWithout(
  containers: readonly ContainerResources[],
  kind: 'requests' | 'limits',
  resource: string,
): ContainerResources[] {
  return containers.filter((container) => !container[kind].has(resource));
}
