import type { KeptWorkload } from './workload-risk';

// The workloads the risk tracker keeps for evaluation (risk-tracker.ts), by key and by namespace,
// held compactly: at cluster scale (10,000 workloads over 5,000 namespaces) the first version spent
// about 600 bytes per workload beside its JSON on the way it held it (issue 33's heap target):
// keys and JSON as V8's trees of concatenated pieces, a copy of the group string per workload, a
// Set per namespace even for a namespace's lone workload. Here keys and JSON are flat strings, the
// identity's group, kind and namespace strings are shared, and a namespace with one workload holds
// its key alone.

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
  /** A namespace's workload keys: the lone key, or a set of two or more. */
  private readonly byNamespace = new Map<string, string | Set<string>>();
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
    else if (typeof keys === 'string') this.byNamespace.set(namespace, new Set([keys, key]));
    else keys.add(key);
  }

  /** Forgets the workload; returns what was kept, if anything. */
  delete(key: string): KeptWorkload | undefined {
    const workload = this.byKey.get(key);
    if (!workload) return undefined;
    this.byKey.delete(key);
    const { namespace } = workload.identity;
    const keys = this.byNamespace.get(namespace);
    if (typeof keys === 'string') this.byNamespace.delete(namespace);
    else if (keys) {
      keys.delete(key);
      if (keys.size === 1) this.byNamespace.set(namespace, keys.values().next().value as string);
    }
    return workload;
  }

  /** The namespace string already held for the namespace (a key of `byNamespace`), or this one. */
  private sharedNamespace(namespace: string): string {
    const keys = this.byNamespace.get(namespace);
    if (keys === undefined) return namespace;
    const someKey = typeof keys === 'string' ? keys : (keys.values().next().value as string);
    return this.byKey.get(someKey)?.identity.namespace ?? namespace;
  }

  private sharedName(name: string): string {
    const shared = this.names.get(name);
    if (shared !== undefined) return shared;
    if (this.names.size < MOST_SHARED_NAMES) this.names.set(name, name);
    return name;
  }
}
