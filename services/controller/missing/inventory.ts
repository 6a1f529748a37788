import {
  BUILT_IN_API_GROUPS,
  groupOf,
  isRecord,
  isStringRecord,
  readPath,
  type KubernetesObject,
} from '../../model/kubernetes';
import { describeWorkload, type WorkloadDescriptor } from '../../model/workload';
import { SharedValues } from '../index/shared-values';
import type { InventoryRecord } from './inventory-record';
import { RecordsByNamespace } from './records-by-namespace';

// The records themselves: inventory-record.ts.
export type { InventoryRecord } from './inventory-record';

export function toInventoryRecord(object: KubernetesObject): InventoryRecord | undefined {
  const name = object.metadata?.name;
  if (typeof name !== 'string' || name === '' || typeof object.kind !== 'string') return undefined;
  const record: InventoryRecord = {
    group: groupOf(object.apiVersion),
    kind: object.kind,
    namespace: typeof object.metadata?.namespace === 'string' ? object.metadata.namespace : null,
    name,
    labels: isStringRecord(object.metadata?.labels) ? { ...object.metadata.labels } : {},
  };
  const spec = isRecord(object.spec) ? object.spec : {};
  if (record.group === '' && record.kind === 'Service' && isStringRecord(spec.selector))
    record.serviceSelector = { ...spec.selector };
  if (
    record.group === 'monitoring.coreos.com' &&
    (record.kind === 'ServiceMonitor' || record.kind === 'PodMonitor')
  ) {
    record.monitorSelector = spec.selector ?? {};
    const namespaceSelector = isRecord(spec.namespaceSelector) ? spec.namespaceSelector : {};
    record.monitorNamespaces = {
      any: namespaceSelector.any === true,
      names: Array.isArray(namespaceSelector.matchNames)
        ? namespaceSelector.matchNames.filter((entry): entry is string => typeof entry === 'string')
        : [],
    };
  }
  if (record.kind === 'PeerAuthentication')
    record.hasWorkloadSelector =
      isRecord(spec.selector) &&
      isRecord(spec.selector.matchLabels) &&
      Object.keys(spec.selector.matchLabels).length > 0;
  return record;
}

/**
 * Objects of every kind delivered by the source, kept compactly and looked up by group/kind, then
 * namespace and name (records-by-namespace.ts).
 */
export class Inventory {
  private readonly byKind = new Map<string, RecordsByNamespace>();
  private readonly workloads = new Map<string, WorkloadDescriptor>();
  /** Kinds known to exist in the cluster (CRDs seen, or objects of the kind seen). */
  private readonly definedKinds = new Map<string, number>();
  private changes = 0;
  private readonly shared = new SharedValues();

  /** Increases on every upsert or removal; lets callers cache what they derive from the inventory. */
  get revision(): number {
    return this.changes;
  }

  upsert(object: KubernetesObject): void {
    this.changes++;
    // Pods owned by a controller are represented by their controller; keep memory to what matters.
    const owners = readPath(object, ['metadata', 'ownerReferences']);
    if (object.kind === 'Pod' && Array.isArray(owners) && owners.length > 0) return;
    const record = toInventoryRecord(object);
    if (!record) return;
    this.remove(object);
    const kindKey = `${record.group}/${record.kind}`;
    let records = this.byKind.get(kindKey);
    if (!records) {
      records = new RecordsByNamespace();
      this.byKind.set(kindKey, records);
    }
    records.add(this.shared.share(record));
    if (record.group === 'apiextensions.k8s.io' && record.kind === 'CustomResourceDefinition')
      this.defineFromCrd(object, 1);
    const workload = describeWorkload(object);
    if (workload)
      this.workloads.set(
        this.shared.share(`${workload.kind}/${workload.namespace}/${workload.name}`),
        this.shared.share(workload),
      );
  }

  remove(object: KubernetesObject): void {
    this.changes++;
    const name = object.metadata?.name;
    if (typeof name !== 'string') return;
    const namespace = typeof object.metadata?.namespace === 'string' ? object.metadata.namespace : null;
    const kindKey = `${groupOf(object.apiVersion)}/${object.kind ?? ''}`;
    const removed = this.byKind.get(kindKey)?.delete(namespace, name) ?? false;
    if (removed && kindKey === 'apiextensions.k8s.io/CustomResourceDefinition')
      this.defineFromCrd(object, -1);
    this.workloads.delete(`${object.kind ?? ''}/${namespace ?? 'default'}/${name}`);
  }

  private defineFromCrd(object: KubernetesObject, delta: number): void {
    const spec = isRecord(object.spec) ? object.spec : {};
    const names = isRecord(spec.names) ? spec.names : {};
    if (typeof spec.group !== 'string' || typeof names.kind !== 'string') return;
    const key = `${spec.group}/${names.kind}`;
    const count = (this.definedKinds.get(key) ?? 0) + delta;
    if (count <= 0) this.definedKinds.delete(key);
    else this.definedKinds.set(key, count);
  }

  /**
   * Objects of a kind, optionally in one namespace (null: cluster-scoped ones), in the order they
   * were last upserted within a namespace; namespaces in the order they first had one.
   */
  records(group: string, kind: string, namespace?: string | null): InventoryRecord[] {
    const records = this.byKind.get(`${group}/${kind}`);
    if (!records) return [];
    return namespace === undefined ? records.all() : records.inNamespace(namespace);
  }

  /** The object of a kind with this name, in a namespace (null: cluster-scoped). */
  record(group: string, kind: string, namespace: string | null, name: string): InventoryRecord | undefined {
    return this.byKind.get(`${group}/${kind}`)?.get(namespace, name);
  }

  allWorkloads(): WorkloadDescriptor[] {
    return [...this.workloads.values()];
  }

  /** Whether the kind exists here: built in, its CRD was seen, or objects of it were. */
  hasKind(group: string, kind: string): boolean {
    return (
      BUILT_IN_API_GROUPS.has(group) ||
      this.definedKinds.has(`${group}/${kind}`) ||
      this.byKind.get(`${group}/${kind}`)?.isEmpty === false
    );
  }
}
