import type { KubernetesObject } from '../../../model/kubernetes';

// What a reflector remembers of each object it delivered: enough to skip an unchanged resend, to
// notice a recreation under the same name, and to delete it when a relist no longer shows it. At
// cluster scale this is one entry per Pod (50,000 in the issue 26 benchmark), so an entry is four
// strings and a number, grouped by namespace so no per-object key is built; the identity handed to
// the sink on delete is built when it is needed. A namespace's entries are held by how many there
// are: the lone entry itself (most namespaces, for most policy kinds), an array of exact size up to
// SMALL_NAMESPACE (a few Pods, a few NetworkPolicies), a map by name beyond. A map's table costs
// ~250 bytes even for one entry: at cluster scale (10,000 namespaces, seven policy kinds and Pods)
// the maps of a few entries were a twentieth of the controller's heap (issue 33).

/** A resourceVersion as etcd's revision writes it: decimal, no leading zero, exact as a double. */
const DECIMAL_VERSION = /^[1-9][0-9]{0,14}$/;

/**
 * A resourceVersion as kept: a decimal one as a number, held inside the entry (a small integer) rather
 * than as a string of its own (24 bytes, for each of 170,000 objects at cluster scale); any other
 * as given. Kubernetes calls resourceVersions opaque: they are only ever compared for equality, and
 * a number and a string never compare equal, so no two versions are confused.
 */
function keptVersion(resourceVersion: string): string | number {
  return DECIMAL_VERSION.test(resourceVersion) ? Number(resourceVersion) : resourceVersion;
}

/** Entries of a namespace up to which they are scanned in an array rather than looked up in a map. */
const SMALL_NAMESPACE = 16;

export interface KnownObject {
  name: string;
  namespace: string | undefined;
  uid: string | undefined;
  /** As kept (see `keptVersion`): compare with `isCurrent`. */
  resourceVersion: string | number;
  /** The relist that last saw it (see `markListing`). */
  listing: number;
}

/** A namespace's objects: the lone one, a few in an array, or a map by name. */
type NamespaceEntries = KnownObject | readonly KnownObject[] | Map<string, KnownObject>;

function isLone(entries: NamespaceEntries): entries is KnownObject {
  return !(entries instanceof Map) && !Array.isArray(entries);
}

/** A copy of `entries` with `entry` replacing position `at` (or added at the end): exact size. */
function withEntry(entries: readonly KnownObject[], entry: KnownObject, at: number): KnownObject[] {
  const copy = new Array<KnownObject>(at === -1 ? entries.length + 1 : entries.length);
  for (let position = 0; position < entries.length; position++) copy[position] = entries[position];
  copy[at === -1 ? entries.length : at] = entry;
  return copy;
}

/** A copy of `entries` without position `at`: exact size. */
function withoutEntry(entries: readonly KnownObject[], at: number): KnownObject[] {
  const copy = new Array<KnownObject>(entries.length - 1);
  for (let position = 0, target = 0; position < entries.length; position++)
    if (position !== at) copy[target++] = entries[position];
  return copy;
}

export class KnownObjects {
  private readonly byNamespace = new Map<string, NamespaceEntries>();
  private count = 0;
  private currentListing = 0;

  get size(): number {
    return this.count;
  }

  get(namespace: string | undefined, name: string): KnownObject | undefined {
    const entries = this.byNamespace.get(namespace ?? '');
    if (entries === undefined) return undefined;
    if (entries instanceof Map) return entries.get(name);
    if (Array.isArray(entries)) return entries.find((entry) => entry.name === name);
    return (entries as KnownObject).name === name ? (entries as KnownObject) : undefined;
  }

  /** Remembers the object as seen in the current listing (or watch). */
  set(object: KubernetesObject): void {
    const name = object.metadata?.name ?? '';
    const namespace = object.metadata?.namespace;
    const namespaceKey = namespace ?? '';
    const entry: KnownObject = {
      name,
      namespace,
      uid: object.metadata?.uid,
      resourceVersion: keptVersion(object.metadata?.resourceVersion ?? ''),
      listing: this.currentListing,
    };
    const entries = this.byNamespace.get(namespaceKey);
    if (entries === undefined) {
      this.byNamespace.set(namespaceKey, entry);
      this.count++;
    } else if (entries instanceof Map) {
      if (!entries.has(name)) this.count++;
      entries.set(name, entry);
    } else if (isLone(entries)) {
      if (entries.name !== name) this.count++;
      this.byNamespace.set(namespaceKey, entries.name === name ? entry : [entries, entry]);
    } else {
      const at = entries.findIndex((candidate) => candidate.name === name);
      if (at === -1) this.count++;
      if (at === -1 && entries.length >= SMALL_NAMESPACE) {
        const byName = new Map(entries.map((candidate) => [candidate.name, candidate]));
        this.byNamespace.set(namespaceKey, byName.set(name, entry));
      } else this.byNamespace.set(namespaceKey, withEntry(entries, entry, at));
    }
  }

  /** Whether the entry was set from an object of this resourceVersion (never for an empty one). */
  isCurrent(entry: KnownObject, resourceVersion: string): boolean {
    return resourceVersion !== '' && entry.resourceVersion === keptVersion(resourceVersion);
  }

  /** Marks an unchanged object as seen by the current listing. */
  touch(entry: KnownObject): void {
    entry.listing = this.currentListing;
  }

  delete(namespace: string | undefined, name: string): boolean {
    const namespaceKey = namespace ?? '';
    const entries = this.byNamespace.get(namespaceKey);
    if (entries === undefined) return false;
    if (entries instanceof Map) {
      if (!entries.delete(name)) return false;
      // Back to an array once it is half the size it became a map at, so churn does not flap.
      if (entries.size <= SMALL_NAMESPACE / 2) this.byNamespace.set(namespaceKey, [...entries.values()]);
    } else if (isLone(entries)) {
      if (entries.name !== name) return false;
      this.byNamespace.delete(namespaceKey);
    } else {
      const at = entries.findIndex((candidate) => candidate.name === name);
      if (at === -1) return false;
      this.byNamespace.set(namespaceKey, entries.length === 2 ? entries[1 - at] : withoutEntry(entries, at));
    }
    this.count--;
    return true;
  }

  /** Starts a relist: what it does not touch or set is what `notSeenInListing` returns after it. */
  markListing(): void {
    this.currentListing++;
  }

  notSeenInListing(): KnownObject[] {
    return this.all().filter((entry) => entry.listing !== this.currentListing);
  }

  all(): KnownObject[] {
    const all: KnownObject[] = [];
    for (const entries of this.byNamespace.values())
      if (entries instanceof Map) all.push(...entries.values());
      else if (Array.isArray(entries)) all.push(...(entries as readonly KnownObject[]));
      else all.push(entries as KnownObject);
    return all;
  }

  clear(): void {
    this.byNamespace.clear();
    this.count = 0;
  }
}
