import type { KeptWorkload } from './workload-risk';

// The workloads the risk tracker keeps for evaluation (risk-tracker.ts), by key and by namespace,
// held compactly: at cluster scale (10,000 workloads over 5,000 namespaces) the first version spent
// about 600 bytes per workload beside its JSON on the way it held it (issue 33's heap target):
// keys and JSON as V8's trees of concatenated pieces, a copy of the group string per workload, a
// Set per namespace even for a namespace's lone workload. Here keys and JSON are flat strings, the
// identity's group, kind and namespace strings are shared, and a namespace holds its lone key alone,
// a few keys in an array of exact size, a set beyond.

/** Keys of a namespace up to which they are held in an array rather than a set. */
const SMALL_NAMESPACE = 16;

/** Distinct group and kind strings remembered for sharing; the kinds served are far fewer. */
const MOST_SHARED_NAMES = 1_024;

/**
 * A flat copy of a string built by concatenation or JSON.stringify (which V8 keeps as a tree of its
 * pieces, each piece an object): a JSON round trip is the one portable way to get one.
 */
function flat(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

export class KeptWorkloads {
  private readonly byKey = new Map<string, KeptWorkload>();
  /** A namespace's workload keys: the lone key, a few in an array, or a set. */
  private readonly byNamespace = new Map<string, string | readonly string[] | Set<string>>();
  private readonly names = new Map<string, string>();

  get size(): number {
    return this.byKey.size;
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  get(key: string): KeptWorkload | undefined {
    return this.byKey.get(key);
  }

  keys(): IterableIterator<string> {
    return this.byKey.keys();
  }

  values(): IterableIterator<KeptWorkload> {
    return this.byKey.values();
  }

  /** The keys of a namespace's workloads. */
  keysIn(namespace: string): readonly string[] | ReadonlySet<string> {
    const keys = this.byNamespace.get(namespace);
    if (keys === undefined) return [];
    return typeof keys === 'string' ? [keys] : keys;
  }

  private someKeyIn(keys: string | readonly string[] | Set<string>): string {
    if (typeof keys === 'string') return keys;
    return keys instanceof Set ? (keys.values().next().value as string) : (keys as readonly string[])[0];
  }

  /** Every namespace holding workloads, with their keys. */
  *namespaces(): IterableIterator<[string, readonly string[] | ReadonlySet<string>]> {
    for (const [namespace, keys] of this.byNamespace)
      yield [namespace, typeof keys === 'string' ? [keys] : keys];
  }

  /** Keeps the workload (replacing the one of the same key) in its compact form. */
  set(workload: KeptWorkload): void {
    const previous = this.byKey.get(workload.key);
    const namespace = previous?.identity.namespace ?? this.sharedNamespace(workload.identity.namespace);
    const key = previous?.key ?? flat(workload.key);
    const { group, kind, name, owner } = workload.identity;
    this.byKey.set(key, {
      key,
      identity: {
        group: this.sharedName(group),
        kind: this.sharedName(kind),
        namespace,
        name,
        ...(owner ? { owner } : {}),
      },
      json: flat(workload.json),
    });
    if (previous) return;
    const keys = this.byNamespace.get(namespace);
    if (keys === undefined) this.byNamespace.set(namespace, key);
    else if (typeof keys === 'string') this.byNamespace.set(namespace, [keys, key]);
    else if (keys instanceof Set) keys.add(key);
    else
      this.byNamespace.set(
        namespace,
        keys.length < SMALL_NAMESPACE ? keys.concat(key) : new Set(keys).add(key),
      );
  }

  /** Forgets the workload; returns what was kept, if anything. */
  delete(key: string): KeptWorkload | undefined {
    const workload = this.byKey.get(key);
    if (!workload) return undefined;
    this.byKey.delete(key);
    const { namespace } = workload.identity;
    const keys = this.byNamespace.get(namespace);
    if (typeof keys === 'string') this.byNamespace.delete(namespace);
    else if (keys instanceof Set) {
      keys.delete(key);
      if (keys.size <= SMALL_NAMESPACE / 2) this.byNamespace.set(namespace, [...keys]);
    } else if (keys) {
      const rest = keys.filter((candidate) => candidate !== key);
      this.byNamespace.set(namespace, rest.length === 1 ? rest[0] : rest);
    }
    return workload;
  }

  /** The namespace string already held for the namespace (a key of `byNamespace`), or this one. */
  private sharedNamespace(namespace: string): string {
    const keys = this.byNamespace.get(namespace);
    if (keys === undefined) return namespace;
    return this.byKey.get(this.someKeyIn(keys))?.identity.namespace ?? namespace;
  }

  private sharedName(name: string): string {
    const shared = this.names.get(name);
    if (shared !== undefined) return shared;
    if (this.names.size < MOST_SHARED_NAMES) this.names.set(name, name);
    return name;
  }
}
