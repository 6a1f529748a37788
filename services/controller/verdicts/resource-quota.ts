import type { ConstraintDraft as Constraint } from '../../model/constraint';
import { isRecord, type KubernetesObject } from '../../model/kubernetes';
import {
  addQuantities,
  compareQuantities,
  multiplyQuantity,
  subtractQuantities,
  ZERO_QUANTITY,
  type Quantity,
} from '../../model/quantity';
import { pluralOfKind } from '../../model/resources';
import { groupOf } from '../../model/kubernetes';
import { detail, text } from '../../model/text';
import { namespaceDefaultedPods, type DefaultedPods } from './admitted-pods';
import { containersWithout, readResourceMap, sharedIfEmpty, type ReadonlyResourceMap } from './pod-resources';
import { showQuantity } from './quantity-text';
import { podInQuotaScope } from './quota-scopes';
import type { Evidence, VerdictContext, VerdictOutcome } from './types';
import { NOT_APPLICABLE, unknown } from './types';
import { ownEntry } from '../../model/own-entry';

// ResourceQuota as its admission plugin enforces it: what the object adds (its pods times replicas,
// a Job's parallelism; one object for `count/...` keys on CREATE) against `hard - used`, per
// resource; compute quotas require every container to set the request or limit they track; scopes
// decide whether the quota counts the object at all. Not covered: a DaemonSet's pods per node (one
// pod is counted), rollouts' surge pods, and usage the quota controller has not recorded yet.

/** Quota keys whose presence requires every container to set the matching value. */
const REQUIRED_COMPUTE: Record<string, { kind: 'requests' | 'limits'; resource: string }> = {
  cpu: { kind: 'requests', resource: 'cpu' },
  memory: { kind: 'requests', resource: 'memory' },
  'requests.cpu': { kind: 'requests', resource: 'cpu' },
  'requests.memory': { kind: 'requests', resource: 'memory' },
  'limits.cpu': { kind: 'limits', resource: 'cpu' },
  'limits.memory': { kind: 'limits', resource: 'memory' },
};

const LEGACY_COUNT_KEYS: Record<string, string> = {
  services: 'services',
  secrets: 'secrets',
  configmaps: 'configmaps',
  persistentvolumeclaims: 'persistentvolumeclaims',
  replicationcontrollers: 'replicationcontrollers',
  resourcequotas: 'resourcequotas',
};

const PREFIXED_KEY = /^(requests|limits)\.(.+)$/;

/** What one key of the quota would be charged for the object's pods. */
function podCharge(key: string, { shape, totals }: DefaultedPods): Quantity | undefined {
  if (key === 'pods' || key === 'count/pods') return { numerator: BigInt(shape.podCount), denominator: 1n };
  const prefixed = PREFIXED_KEY.exec(key);
  const perPod = prefixed
    ? (prefixed[1] === 'requests' ? totals.requests : totals.limits).get(prefixed[2])
    : ['cpu', 'memory', 'ephemeral-storage'].includes(key) || key.startsWith('hugepages-')
      ? totals.requests.get(key)
      : undefined;
  return perPod ? multiplyQuantity(perPod, shape.podCount) : undefined;
}

/** What a `count/...` or legacy count key charges for the object itself on CREATE. */
function objectCharge(key: string, object: KubernetesObject): Quantity | undefined {
  const group = groupOf(object.apiVersion);
  const plural = pluralOfKind(object.kind ?? '');
  const counted = key.startsWith('count/') ? key.slice('count/'.length) : ownEntry(LEGACY_COUNT_KEYS, key);
  if (counted === undefined) return undefined;
  const own = group === '' ? plural : `${plural}.${group}`;
  return counted === own ? { numerator: 1n, denominator: 1n } : undefined;
}

function claimCharge(key: string, object: KubernetesObject): Quantity | undefined {
  if (object.kind !== 'PersistentVolumeClaim' || !/(^|\/)requests\.storage$/.test(key)) return undefined;
  const spec = isRecord(object.spec) ? object.spec : {};
  const requests = isRecord(spec.resources)
    ? readResourceMap(spec.resources.requests)
    : new Map<string, Quantity>();
  return requests.get('storage');
}

function missingValues(key: string, { shape }: DefaultedPods): Evidence[] {
  const required = ownEntry(REQUIRED_COMPUTE, key);
  if (!required) return [];
  return containersWithout(shape.containers, required.kind, required.resource).map((container) => ({
    path: `${container.path}.resources.${required.kind}.${required.resource}`,
    message: text`container "${container.name}" sets no ${required.resource} ${required.kind === 'requests' ? 'request' : 'limit'}; a quota on ${detail(key, 'this resource')} requires one on every container`,
  }));
}

function chargesFor(
  key: string,
  object: KubernetesObject,
  pods: DefaultedPods | undefined,
  creating: boolean,
): Quantity | undefined {
  const fromPods = pods ? podCharge(key, pods) : undefined;
  if (fromPods) return fromPods;
  const claim = claimCharge(key, object);
  if (claim) return claim;
  return creating ? objectCharge(key, object) : undefined;
}

interface QuotaFigures {
  hard: ReadonlyResourceMap;
  used: ReadonlyResourceMap;
}

// One parse per ResourceQuota revision: the index keeps one object per revision, and the parse lives
// as long as it; an empty figure (a quota without status) is the shared empty map.
const parsedQuotas = new WeakMap<KubernetesObject, QuotaFigures>();

function quotaFigures(quota: KubernetesObject): QuotaFigures {
  const cached = parsedQuotas.get(quota);
  if (cached) return cached;
  const spec = isRecord(quota.spec) ? quota.spec : {};
  const figures = {
    hard: sharedIfEmpty(readResourceMap(spec.hard)),
    used: sharedIfEmpty(readResourceMap(isRecord(quota.status) ? quota.status.used : undefined)),
  };
  parsedQuotas.set(quota, figures);
  return figures;
}

export function evaluateResourceQuota(
  _constraint: Constraint,
  source: KubernetesObject,
  context: VerdictContext,
): VerdictOutcome {
  const { object, oldObject, operation } = context.admitted;
  const spec = isRecord(source.spec) ? source.spec : {};
  const pods = namespaceDefaultedPods(object, context);
  const scoped = (Array.isArray(spec.scopes) && spec.scopes.length > 0) || isRecord(spec.scopeSelector);
  if (scoped && (!pods || !podInQuotaScope(pods.shape, spec))) return NOT_APPLICABLE;
  const { hard, used } = quotaFigures(source);
  const oldPods =
    operation === 'UPDATE' && oldObject ? namespaceDefaultedPods(oldObject, context) : undefined;
  const evidence: Evidence[] = [];
  /** Count keys that would be exceeded by a CREATE of an object that may exist (an UPDATE is not counted). */
  const countsIfNew: string[] = [];
  let rejectsObject = false;
  for (const [key, limit] of hard) {
    context.guard.checkpoint();
    if (pods) evidence.push(...missingValues(key, pods));
    const fromPods = pods ? podCharge(key, pods) : undefined;
    const charge = fromPods ?? chargesFor(key, object, undefined, operation === 'CREATE');
    if (!charge) continue;
    const previous = oldObject ? chargesFor(key, oldObject, oldPods, false) : undefined;
    const added = previous ? subtractQuantities(charge, previous) : charge;
    if (compareQuantities(added, ZERO_QUANTITY) <= 0) continue;
    const alreadyUsed = used.get(key) ?? ZERO_QUANTITY;
    if (compareQuantities(addQuantities(alreadyUsed, added), limit) <= 0) continue;
    if (!fromPods && context.admitted.mayExist && objectCharge(key, object)) {
      countsIfNew.push(key);
      continue;
    }
    const left = subtractQuantities(limit, alreadyUsed);
    const leftText = showQuantity(key, compareQuantities(left, ZERO_QUANTITY) < 0 ? ZERO_QUANTITY : left);
    const podsText =
      pods && fromPods ? ` (${pods.shape.podCount} pod${pods.shape.podCount === 1 ? '' : 's'})` : '';
    if (!fromPods) rejectsObject = true;
    evidence.push({
      path: pods && fromPods ? `${pods.shape.specPath}.containers` : 'metadata',
      message: text`would exceed the quota: needs ${showQuantity(key, added)} ${key}${podsText}, ${detail(`${leftText} left of ${showQuantity(key, limit)}`, 'more than is left')}`,
    });
  }
  if (
    !pods &&
    evidence.length === 0 &&
    ![...hard.keys()].some((key) => chargesFor(key, object, undefined, operation === 'CREATE'))
  )
    return NOT_APPLICABLE;
  if (evidence.length === 0 && countsIfNew.length > 0)
    return unknown(
      text`${detail(countsIfNew.join(', '), 'its object count')} is used up: a new object is rejected, an update of an existing one is not counted, and whether it exists is not known here`,
    );
  if (evidence.length === 0) return { verdict: 'passes', evidence: [] };
  // A bare Pod is itself refused; a workload is admitted and its pods are refused.
  const barePod = object.kind === 'Pod' && groupOf(object.apiVersion) === '';
  return { verdict: 'violates', evidence, rejects: rejectsObject || barePod ? 'object' : 'pods' };
}
