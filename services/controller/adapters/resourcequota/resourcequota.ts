import type { MetricUnit, Metrics, Severity } from '../../../model/api';
import type { Adapter, ConstraintDraft, ResourceTarget, SourceObject } from '../../../model/constraint';
import type { KubernetesObject } from '../../../model/kubernetes';
import { formatPercent, percentOf } from '../../../model/quantity';
import { WORKLOAD_RESOURCES } from '../../../model/resources';
import { detail, namespaceName, objectName, text, type NamePart, type Text } from '../../../model/text';
import {
  namespacedSourceOf,
  readRecord,
  readRecordList,
  readStringList,
  requireSpec,
} from '../shared/object-fields';
import {
  describeQuotaScope,
  QUOTA_SCOPE_NAMES,
  type QuotaScopeRequirement,
} from '../../../model/quota-scope';
import { readChoice } from '../shared/scope-text';
import { readQuantityMap, type NamedQuantity } from '../shared/quantity-fields';
import { askOwnerStep, inspectSourceStep } from '../shared/remediation';
import { POLICY_SOURCE_KINDS } from '../../../model/watched-kinds';
import { ownEntry } from '../../../model/own-entry';

// v1 ResourceQuota → one ResourceLimit constraint per quota, with exact usage metrics per resource.

const CRITICAL_PERCENT = 90;
const WARNING_PERCENT = 75;
/** Resources named in the summary; the metrics hold every one. */
const MAX_NAMED_RESOURCES = 6;

/** `gold.storageclass.storage.k8s.io/requests.storage` limits a storage class's share. */
const STORAGE_CLASS_INFIX = '.storageclass.storage.k8s.io/';

/** Object-count quota keys that predate `count/<resource>`, mapped to the resource they count. */
const OBJECT_COUNT_RESOURCES: Record<string, string> = {
  pods: 'pods',
  services: 'services',
  'services.loadbalancers': 'services',
  'services.nodeports': 'services',
  secrets: 'secrets',
  configmaps: 'configmaps',
  persistentvolumeclaims: 'persistentvolumeclaims',
  replicationcontrollers: 'replicationcontrollers',
  resourcequotas: 'resourcequotas',
};

const RESOURCE_LABELS: Record<string, string> = {
  cpu: 'CPU',
  memory: 'Memory',
  storage: 'Storage',
  'ephemeral-storage': 'Ephemeral storage',
  pods: 'Pods',
};

interface ResourceUsage {
  resource: string;
  hard: string;
  used: string;
  percent: number;
  /** Whether the quota's status reported usage for this resource at all. */
  reported: boolean;
}

/** `requests.cpu` → `cpu`; `gold.storageclass.storage.k8s.io/requests.storage` → `storage`. */
function baseResourceOf(resource: string): string {
  const classAt = resource.indexOf(STORAGE_CLASS_INFIX);
  const withoutClass = classAt === -1 ? resource : resource.slice(classAt + STORAGE_CLASS_INFIX.length);
  return withoutClass.replace(/^(requests|limits)\./, '');
}

function unitOf(resource: string): MetricUnit {
  if (resource.startsWith('count/')) return 'count';
  const base = baseResourceOf(resource);
  if (base === 'cpu') return 'cores';
  if (
    base === 'memory' ||
    base === 'storage' ||
    base === 'ephemeral-storage' ||
    base.startsWith('hugepages-')
  )
    return 'bytes';
  return 'count';
}

/** Human label for the figures: `requests.cpu` → `CPU requests`; unknown names stay as written. */
function labelOf(resource: string): string {
  const prefixed = /^(requests|limits)\.(.+)$/.exec(resource);
  const label = prefixed ? ownEntry(RESOURCE_LABELS, prefixed[2]) : undefined;
  if (prefixed && label) return `${label} ${prefixed[1]}`;
  return ownEntry(RESOURCE_LABELS, resource) ?? resource;
}

/** The API resource a quota key counts, beyond the workloads every quota concerns. */
function countedResourceOf(resource: string): ResourceTarget | undefined {
  if (resource.startsWith('count/')) {
    // `count/deployments.apps` is `<plural>.<group>`; a bare plural is in the core group.
    const counted = resource.slice('count/'.length);
    const dot = counted.indexOf('.');
    return dot === -1
      ? { group: '', resource: counted }
      : { group: counted.slice(dot + 1), resource: counted.slice(0, dot) };
  }
  const base = baseResourceOf(resource);
  if (base === 'storage' || base === 'persistentvolumeclaims')
    return { group: '', resource: 'persistentvolumeclaims' };
  const counted = ownEntry(OBJECT_COUNT_RESOURCES, resource);
  return counted === undefined ? undefined : { group: '', resource: counted };
}

function resourceTargetsOf(resources: readonly string[]): ResourceTarget[] {
  const targets = [...WORKLOAD_RESOURCES];
  const seen = new Set(targets.map((target) => `${target.group}/${target.resource}`));
  for (const resource of resources) {
    const target = countedResourceOf(resource);
    if (!target || seen.has(`${target.group}/${target.resource}`)) continue;
    seen.add(`${target.group}/${target.resource}`);
    targets.push(target);
  }
  return targets;
}

function usageOf(hard: readonly NamedQuantity[], used: readonly NamedQuantity[]): ResourceUsage[] {
  const usedByResource = new Map(used.map((entry) => [entry.resource, entry]));
  return hard.map((limit) => {
    const usage = usedByResource.get(limit.resource);
    return {
      resource: limit.resource,
      hard: limit.written,
      used: usage?.written ?? '0',
      // Compared rounded to one decimal, as shown: 74.95% is shown 75% and is therefore a Warning.
      percent: usage ? percentOf(usage.quantity, limit.quantity) : 0,
      reported: usage !== undefined,
    };
  });
}

function severityOf(highestPercent: number): Severity {
  if (highestPercent >= CRITICAL_PERCENT) return 'Critical';
  if (highestPercent >= WARNING_PERCENT) return 'Warning';
  return 'Info';
}

/** What a developer can do about the resource closest to its limit. */
function actionFor(resource: string): string {
  if (resource.startsWith('count/') || unitOf(resource) === 'count')
    return 'delete objects you no longer need';
  if (baseResourceOf(resource) === 'storage')
    return 'delete unused PersistentVolumeClaims or request less storage';
  return 'lower the requests and limits of your workloads';
}

/** The first resource with the highest percent used (usages are sorted by resource name). */
function closestToLimit(usages: readonly ResourceUsage[]): ResourceUsage {
  return usages.reduce((closest, usage) => (usage.percent > closest.percent ? usage : closest));
}

const SCOPE_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;

/** `spec.scopes` (each an Exists) and `spec.scopeSelector.matchExpressions`, ANDed as Kubernetes does. */
function readQuotaScopes(spec: Record<string, unknown>): QuotaScopeRequirement[] {
  const scopes = readStringList(spec.scopes, 'spec.scopes').map(
    (scopeName, index): QuotaScopeRequirement => ({
      scopeName: readChoice(scopeName, `spec.scopes[${index}]`, QUOTA_SCOPE_NAMES, 'BestEffort'),
      operator: 'Exists',
    }),
  );
  const selector = readRecord(spec.scopeSelector, 'spec.scopeSelector');
  readRecordList(selector.matchExpressions, 'spec.scopeSelector.matchExpressions').forEach(
    (expression, index) => {
      const where = `spec.scopeSelector.matchExpressions[${index}]`;
      const values = readStringList(expression.values, `${where}.values`);
      scopes.push({
        scopeName: readChoice(expression.scopeName, `${where}.scopeName`, QUOTA_SCOPE_NAMES, 'BestEffort'),
        operator: readChoice(expression.operator, `${where}.operator`, SCOPE_OPERATORS, 'In'),
        ...(values.length > 0 ? { values } : {}),
      });
    },
  );
  return scopes;
}

/** `ResourceQuota "q" [counts only <scope> and ]limits a, b: <figures>`. */
function describeQuota(
  quota: NamePart,
  usages: readonly ResourceUsage[],
  quotaScopes: readonly QuotaScopeRequirement[],
  anyReported: boolean,
): Text {
  const names = usages.map((usage) => usage.resource);
  const resourceNames =
    names.length > MAX_NAMED_RESOURCES
      ? `${names.slice(0, MAX_NAMED_RESOURCES).join(', ')} and ${names.length - MAX_NAMED_RESOURCES} more`
      : names.join(', ');
  // A scoped quota says whose usage it counts: "counts only pods with PriorityClass high and limits".
  const counts = quotaScopes.length > 0 ? `counts only ${describeQuotaScope(quotaScopes)} and ` : '';
  return anyReported
    ? text`ResourceQuota "${quota}" ${counts}limits ${resourceNames}: ${detail(
        usages
          .map(
            (usage) =>
              `${labelOf(usage.resource)} ${usage.used}/${usage.hard} (${formatPercent(usage.percent)})`,
          )
          .join('; '),
        'usage hidden',
      )}`
    : text`ResourceQuota "${quota}" ${counts}limits ${resourceNames}: ${detail(
        usages.map((usage) => `${labelOf(usage.resource)} ${usage.hard}`).join('; '),
        'limits hidden',
      )} (no usage reported yet)`;
}

/** A scoped quota counts pods (or, by VolumeAttributesClass, claims) only. */
function quotaTargets(
  usages: readonly ResourceUsage[],
  quotaScopes: readonly QuotaScopeRequirement[],
): ResourceTarget[] {
  if (quotaScopes.length === 0) return resourceTargetsOf(usages.map((usage) => usage.resource));
  return quotaScopes.some((scope) => scope.scopeName === 'VolumeAttributesClass')
    ? [{ group: '', resource: 'persistentvolumeclaims' }]
    : [...WORKLOAD_RESOURCES];
}

function buildConstraint(
  source: SourceObject & { namespace: string },
  usages: ResourceUsage[],
  quotaScopes: QuotaScopeRequirement[],
): ConstraintDraft {
  const quota = objectName(source.name, source.namespace);
  const namespace = namespaceName(source.namespace);
  const anyReported = usages.some((usage) => usage.reported);
  const closest = closestToLimit(usages);
  const highestPercent = anyReported ? closest.percent : 0;
  const severity = severityOf(highestPercent);
  const summary = describeQuota(quota, usages, quotaScopes, anyReported);

  const remediationHint: Text = anyReported
    ? text`${actionFor(closest.resource)}, or ask the owner of namespace ${namespace} for a bigger quota (ResourceQuota "${quota}": ${detail(
        `${labelOf(closest.resource)} at ${formatPercent(closest.percent)}`,
        'usage hidden',
      )})`
    : text`keep the totals of your workloads within ResourceQuota "${quota}", or ask the owner of namespace ${namespace} for a bigger quota`;

  const metrics: Metrics = {};
  for (const usage of usages) {
    metrics[usage.resource] = {
      hard: usage.hard,
      used: usage.used,
      unit: unitOf(usage.resource),
      percent_used: usage.percent,
    };
  }

  return {
    id: 'quota',
    name: source.name,
    displayName: [quota],
    type: 'ResourceLimit',
    severity,
    effect: 'limit',
    adapter: 'resourcequota',
    source,
    scope: { kind: 'namespace', namespace: source.namespace },
    resourceTargets: quotaTargets(usages, quotaScopes),
    ...(quotaScopes.length > 0 ? { quotaScopes } : {}),
    tags: [
      'quota',
      ...(quotaScopes.length > 0 ? ['scoped'] : []),
      ...(highestPercent >= 100 ? ['exhausted'] : highestPercent >= WARNING_PERCENT ? ['near-limit'] : []),
    ],
    summary,
    remediationHint,
    remediation: {
      summary: remediationHint,
      steps: [
        inspectSourceStep(source, 'resourcequota'),
        askOwnerStep(
          text`Ask the owner of namespace ${namespace} to raise ResourceQuota "${quota}" if your workloads need more`,
          'namespace-admin',
        ),
      ],
    },
    metrics,
  };
}

export function resourceQuotaToConstraints(object: KubernetesObject): ConstraintDraft[] {
  const source = namespacedSourceOf(object);
  const spec = requireSpec(object);
  const hard = readQuantityMap(spec.hard, 'spec.hard');
  const status = readRecord(object.status, 'status');
  const used = readQuantityMap(status.used, 'status.used');
  // A quota without hard limits constrains nothing, so it yields no constraint.
  if (hard.length === 0) return [];
  return [buildConstraint(source, usageOf(hard, used), readQuotaScopes(spec))];
}

export const resourceQuotaAdapter: Adapter = {
  name: 'resourcequota',
  kinds: POLICY_SOURCE_KINDS.resourcequota.kinds,
  toConstraints: (object) => resourceQuotaToConstraints(object),
};
