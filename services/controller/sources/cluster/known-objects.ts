import type { KubernetesObject } from '../../../model/kubernetes';

// What a reflector remembers of each object it delivered: enough to skip an unchanged resend, to
// notice a recreation under the same name, and to delete it when a relist no longer shows it. At
// cluster scale this is one entry per Pod (50,000 in the issue 26 benchmark), so an entry is four
// strings and a number, grouped by namespace so no per-object key is built; the identity handed to
// the sink on delete is built when it is needed.

export interface KnownObject {
  name: string;
  namespace: string | undefined;
  uid: string | undefined;
  resourceVersion: string;
  /** The relist that last saw it (see `markListing`). */
  listing: number;
}

export class KnownObjects {
  private readonly byNamespace = new Map<string, Map<string, KnownObject>>();
  private count = 0;
  private currentListing = 0;

  get size(): number {
    return this.count;
  }

  get(namespace: string | undefined, name: string): KnownObject | undefined {
    return this.byNamespace.get(namespace ?? '')?.get(name);
  }

  /** Remembers the object as seen in the current listing (or watch). */
  set(object: KubernetesObject): void {
    const name = object.metadata?.name ?? '';
    const namespace = object.metadata?.namespace;
    let names = this.byNamespace.get(namespace ?? '');
    if (!names) {
      names = new Map();
      this.byNamespace.set(namespace ?? '', names);
    }
    const entry: KnownObject = {
      name,
      namespace,
      uid: object.metadata?.uid,
      resourceVersion: object.metadata?.resourceVersion ?? '',
      listing: this.currentListing,
    };
    if (!names.has(name)) this.count++;
    names.set(name, entry);
  }

  /** Marks an unchanged object as seen by the current listing. */
  touch(entry: KnownObject): void {
    entry.listing = this.currentListing;
  }

  delete(namespace: string | undefined, name: string): boolean {
    const names = this.byNamespace.get(namespace ?? '');
    if (!names?.delete(name)) return false;
    this.count--;
    if (names.size === 0) this.byNamespace.delete(namespace ?? '');
    return true;
  }

  /** Starts a relist: what it does not touch or set is what `notSeenInListing` returns after it. */
  markListing(): void {
    this.currentListing++;
  }

  notSeenInListing(): KnownObject[] {
    const missing: KnownObject[] = [];
    for (const names of this.byNamespace.values())
      for (const entry of names.values()) if (entry.listing !== this.currentListing) missing.push(entry);
    return missing;
  }

  all(): KnownObject[] {
    return [...this.byNamespace.values()].flatMap((names) => [...names.values()]);
  }

  clear(): void {
    this.byNamespace.clear();
    this.count = 0;
  }
}
