import type { ConstraintIndex } from '../index/constraint-index';

// Views that are pure functions of the index's state and a key (namespace, level, query) are kept
// until the index's revision moves: reads outnumber index changes by far, and building a view was
// 12-15% of a read's CPU (docs/benchmarks.md). Cached values are frozen, so a caller that tried to
// change a shared value would throw instead of corrupting the answers that follow.

/** Freezes a value and everything in it. */
export function deepFreeze<Value>(value: Value): Value {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const nested of Object.values(value)) deepFreeze(nested);
  }
  return value;
}

interface Generation<Value> {
  revision: number;
  values: Map<string, Value>;
}

/** Enough for every namespace a busy cluster's developers read between two index changes. */
const DEFAULT_MAX_ENTRIES = 1_000;

export class RevisionCache<Value> {
  private readonly generations = new WeakMap<ConstraintIndex, Generation<Value>>();

  constructor(private readonly maxEntries: number = DEFAULT_MAX_ENTRIES) {}

  /** The value for `key` at the index's current revision, built (and frozen) on first use. */
  get(index: ConstraintIndex, key: string, build: () => Value): Value {
    let generation = this.generations.get(index);
    if (!generation || generation.revision !== index.revision) {
      generation = { revision: index.revision, values: new Map() };
      this.generations.set(index, generation);
    }
    const cached = generation.values.get(key);
    if (cached !== undefined) return cached;
    const value = deepFreeze(build());
    // Oldest out first (a Map keeps insertion order), so reads of many keys stay bounded.
    if (generation.values.size >= this.maxEntries) {
      const oldest = generation.values.keys().next();
      if (!oldest.done) generation.values.delete(oldest.value);
    }
    generation.values.set(key, value);
    return value;
  }
}
