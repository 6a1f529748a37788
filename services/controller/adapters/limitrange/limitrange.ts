import {
  AdapterParseError,
  type Adapter,
  type ConstraintDraft,
  type ResourceTarget,
  type SourceObject,
} from '../../../model/constraint';
import type { KubernetesObject } from '../../../model/kubernetes';
import { WORKLOAD_RESOURCES } from '../../../model/resources';
import { detail, joinText, namespaceName, objectName, text, type Text } from '../../../model/text';
import { readRecordList, requireSpec, namespacedSourceOf } from '../shared/object-fields';
import { readQuantityMap, type NamedQuantity } from '../shared/quantity-fields';
import { askOwnerStep, inspectSourceStep } from '../shared/remediation';
import { POLICY_SOURCE_KINDS } from '../../../model/watched-kinds';

// v1 LimitRange → one Info ResourceLimit constraint describing its defaults and bounds per type.
//
// Decision: no `metrics`. The spec makes metrics non-null only for ResourceLimit constraints, but a
// LimitRange has no usage to report (it bounds each object, it does not count a total), so there is
// no `used` or `percent_used` that would be true; the views render the absent metrics as null.

const LIMIT_TYPES = ['Container', 'Pod', 'PersistentVolumeClaim'] as const;
type LimitType = (typeof LIMIT_TYPES)[number];

/** The fields of a limit entry, in the order the summary shows them, with the words it uses. */
const LIMIT_FIELDS = [
  { field: 'default', label: 'default', isBound: false },
  { field: 'defaultRequest', label: 'default request', isBound: false },
  { field: 'min', label: 'min', isBound: true },
  { field: 'max', label: 'max', isBound: true },
  { field: 'maxLimitRequestRatio', label: 'max limit/request ratio', isBound: true },
] as const;

interface LimitEntry {
  type: LimitType;
  values: Array<{ label: string; isBound: boolean; quantities: NamedQuantity[] }>;
}

function isLimitType(value: unknown): value is LimitType {
  return typeof value === 'string' && (LIMIT_TYPES as readonly string[]).includes(value);
}

function readLimitEntry(entry: Record<string, unknown>, where: string): LimitEntry {
  if (!isLimitType(entry.type))
    throw new AdapterParseError(
      `${where}.type is ${JSON.stringify(entry.type) ?? 'missing'}, expected Container, Pod or PersistentVolumeClaim`,
    );
  const values = LIMIT_FIELDS.map(({ field, label, isBound }) => ({
    label,
    isBound,
    quantities: readQuantityMap(entry[field], `${where}.${field}`),
  })).filter((value) => value.quantities.length > 0);
  return { type: entry.type, values };
}

/** `Container: default cpu=500m memory=512Mi, max cpu=2` with the figures as one detail. */
function describeEntry(entry: LimitEntry): Text {
  if (entry.values.length === 0) return text`${entry.type}: no values`;
  const figures = entry.values
    .map(
      (value) =>
        `${value.label} ${value.quantities.map((quantity) => `${quantity.resource}=${quantity.written}`).join(' ')}`,
    )
    .join(', ');
  return text`${entry.type}: ${detail(figures, 'values hidden')}`;
}

function resourceTargetsOf(entries: readonly LimitEntry[]): ResourceTarget[] {
  const targets: ResourceTarget[] = [];
  if (entries.some((entry) => entry.type !== 'PersistentVolumeClaim')) targets.push(...WORKLOAD_RESOURCES);
  if (entries.some((entry) => entry.type === 'PersistentVolumeClaim'))
    targets.push({ group: '', resource: 'persistentvolumeclaims' });
  return targets;
}

function hintFor(entries: readonly LimitEntry[], limitRange: Text): Text {
  const boundsWorkloads = entries.some((entry) => entry.type !== 'PersistentVolumeClaim');
  const boundsClaims = entries.some((entry) => entry.type === 'PersistentVolumeClaim');
  const subjects = [
    ...(boundsWorkloads ? ['container and pod requests and limits'] : []),
    ...(boundsClaims ? ['PersistentVolumeClaim storage requests'] : []),
  ].join(' and ');
  const hasBounds = entries.some((entry) => entry.values.some((value) => value.isBound));
  const hasDefaults = entries.some((entry) => entry.values.some((value) => !value.isBound));
  if (!hasBounds)
    return text`set ${subjects} explicitly if the defaults of LimitRange "${limitRange}" do not fit`;
  return hasDefaults
    ? text`keep ${subjects} within the min/max of LimitRange "${limitRange}"; values you leave unset get its defaults`
    : text`keep ${subjects} within the min/max of LimitRange "${limitRange}"`;
}

function buildConstraint(
  source: SourceObject & { namespace: string },
  entries: LimitEntry[],
): ConstraintDraft {
  const limitRange = [objectName(source.name, source.namespace)];
  const namespace = namespaceName(source.namespace);
  const summary = text`LimitRange "${limitRange}" sets ${joinText(entries.map(describeEntry), '; ')}`;
  const remediationHint = hintFor(entries, limitRange);
  const hasDefaults = entries.some((entry) => entry.values.some((value) => !value.isBound));
  const hasBounds = entries.some((entry) => entry.values.some((value) => value.isBound));
  return {
    id: 'limitrange',
    name: source.name,
    displayName: limitRange,
    type: 'ResourceLimit',
    severity: 'Info',
    effect: 'limit',
    adapter: 'limitrange',
    source,
    scope: { kind: 'namespace', namespace: source.namespace },
    resourceTargets: resourceTargetsOf(entries),
    tags: ['limit-range', ...(hasDefaults ? ['defaults'] : []), ...(hasBounds ? ['bounds'] : [])],
    summary,
    remediationHint,
    remediation: {
      summary: remediationHint,
      steps: [
        inspectSourceStep(source, 'limitrange'),
        askOwnerStep(
          text`Ask the owner of namespace ${namespace} to change LimitRange "${limitRange}" if its bounds do not fit your workload`,
          'namespace-admin',
        ),
      ],
    },
  };
}

export function limitRangeToConstraints(object: KubernetesObject): ConstraintDraft[] {
  const source = namespacedSourceOf(object);
  const spec = requireSpec(object);
  const entries = readRecordList(spec.limits, 'spec.limits').map((entry, index) =>
    readLimitEntry(entry, `spec.limits[${index}]`),
  );
  // The API server requires `limits`; an empty one bounds nothing, so it yields no constraint.
  if (entries.length === 0) return [];
  return [buildConstraint(source, entries)];
}

export const limitRangeAdapter: Adapter = {
  name: 'limitrange',
  kinds: POLICY_SOURCE_KINDS.limitrange.kinds,
  toConstraints: (object) => limitRangeToConstraints(object),
};
