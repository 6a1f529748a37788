// Values derived from an object and reused by the admission checks that come soon after, without
// keeping one for every object ever seen: a WeakMap keyed by a constraint keeps its value as long as
// the constraint, and a sweep of every workload (the workloads at risk) reaches every constraint of
// the cluster (issue 33: heap per constraint). Two generations rather than one map with the oldest
// deleted first, as the admission memo does: a map that deletes one entry for each one it adds is
// rehashed again and again, and each discarded table lives until a full collection.

export class KeptLately<Key, Value> {
  private recent = new Map<Key, Value>();
  private older = new Map<Key, Value>();

  /** At most `generationSize` values in each generation: at most twice as many kept. */
  constructor(private readonly generationSize: number) {}

  get size(): number {
    return this.recent.size + this.older.size;
  }

  /** The value kept for `key`, else the one `derive` makes, kept from now on. */
  get(key: Key, derive: (key: Key) => Value): Value {
    const recent = this.recent.get(key);
    if (recent !== undefined) return recent;
    const value = this.older.get(key) ?? derive(key);
    if (this.recent.size >= this.generationSize) {
      this.older = this.recent;
      this.recent = new Map();
    }
    this.recent.set(key, value);
    return value;
  }
}
