import type { InventoryRecord } from './inventory-record';

// One kind's inventory records by namespace ('' for cluster-scoped objects), then by name. Rules ask
// for one namespace's records once per workload; a single map per kind had them scanned out of every
// namespace's (60,000 inventory objects at cluster scale).
//
// Memory: most kinds have one object in a namespace (a cluster's policies: one of each kind per
// namespace), and a Map per namespace would cost some 200 bytes per such record. A namespace with one
// record holds the record itself; a Map only from the second. The key is the namespace string the
// record already shares, where the flat map had a `namespace/name` string of its own per record.

type Entry = InventoryRecord | Map<string, InventoryRecord>;

export class RecordsByNamespace {
  private readonly namespaces = new Map<string, Entry>();

  /** Whether no record is held. */
  get isEmpty(): boolean {
    return this.namespaces.size === 0;
  }

  /** Adds a record, after any of its namespace; the caller removes an older one of the name first. */
  add(record: InventoryRecord): void {
    const namespace = record.namespace ?? '';
    const entry = this.namespaces.get(namespace);
    if (entry === undefined) this.namespaces.set(namespace, record);
    else if (entry instanceof Map) entry.set(record.name, record);
    else
      this.namespaces.set(
        namespace,
        new Map([
          [entry.name, entry],
          [record.name, record],
        ]),
      );
  }

  /** Removes the record of this name; whether there was one. */
  delete(namespace: string | null, name: string): boolean {
    const key = namespace ?? '';
    const entry = this.namespaces.get(key);
    if (entry === undefined) return false;
    if (!(entry instanceof Map)) {
      if (entry.name !== name) return false;
      this.namespaces.delete(key);
      return true;
    }
    if (!entry.delete(name)) return false;
    // Back to the record alone: a namespace's churn leaves no Map behind.
    if (entry.size === 1) this.namespaces.set(key, entry.values().next().value as InventoryRecord);
    return true;
  }

  get(namespace: string | null, name: string): InventoryRecord | undefined {
    const entry = this.namespaces.get(namespace ?? '');
    if (entry === undefined || !(entry instanceof Map)) return entry?.name === name ? entry : undefined;
    return entry.get(name);
  }

  /** A namespace's records, in the order they were added. */
  inNamespace(namespace: string | null): InventoryRecord[] {
    const entry = this.namespaces.get(namespace ?? '');
    if (entry === undefined) return [];
    return entry instanceof Map ? [...entry.values()] : [entry];
  }

  /** Every record, a namespace's together, namespaces in the order they first had one. */
  all(): InventoryRecord[] {
    const records: InventoryRecord[] = [];
    for (const entry of this.namespaces.values())
      if (entry instanceof Map) for (const record of entry.values()) records.push(record);
      else records.push(entry);
    return records;
  }
}
