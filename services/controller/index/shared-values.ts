// Shares what repeats across the index's constraints and kept source objects (issue 26). Adapters
// build every constraint afresh: the same resource targets, tags, remediation steps and text parts
// in every namespace, arrays grown by push (V8 leaves them with spare capacity), strings built by
// concatenation (V8 keeps them as trees of their pieces). A heap snapshot of a 10,000-constraint
// cluster showed those containers, not the text itself, as most of the index's 3.9 KB per constraint.
//
// `share` copies a value bottom-up into exact-size arrays and plain objects, flattens and interns its
// strings, and hash-conses each container: a container equal to one already given out (same
// properties in the same order, children identical) is that one. Given-out containers are frozen,
// since one is now read by many constraints; a writer would corrupt the others, so it fails loudly
// instead. Only plain objects and arrays are copied; anything else (class instances, functions) is
// kept as it is and compared by identity.
//
// The tables are generational so they never outgrow what is live: lookups go to the current
// generation, then to the previous one (a hit is carried forward); when the current one is full the
// previous one is dropped. A value still used keeps being found; one gone stops being remembered
// after two generations, whatever the churn.

/** Strings shorter than this are never trees of pieces in V8 (ConsString::kMinLength is 13). */
const SHORTEST_CONCATENATED_STRING = 13;

// Entries per generation. The tables are full at cluster scale (every unique id, uid and key goes
// through them), so their size is paid whatever is shared: four full tables of 131,072 entries were
// ~14 MiB. Values worth sharing repeat within a few thousand insertions (the same spec in the next
// namespace of a listing) and a hit carries them forward; 32,768 kept every saving measured at
// 100,000 constraints (951 -> 861 bytes per constraint in the index, 16,384: 846).
const DEFAULT_GENERATION_SIZE = 1 << 15;

/** Distinct key sets given a template; policy specs bring arbitrary keys, so this is bounded. */
const MOST_TEMPLATES = 4_096;

class Generations<Key, Value> {
  private current = new Map<Key, Value>();
  private previous = new Map<Key, Value>();

  constructor(private readonly generationSize: number) {}

  get(key: Key): Value | undefined {
    const found = this.current.get(key);
    if (found !== undefined) return found;
    const carried = this.previous.get(key);
    if (carried !== undefined) this.set(key, carried);
    return carried;
  }

  set(key: Key, value: Value): void {
    if (this.current.size >= this.generationSize) {
      this.previous = this.current;
      this.current = new Map();
    }
    this.current.set(key, value);
  }

  get size(): number {
    return this.current.size + this.previous.size;
  }
}

/** Hashes stay within 30 bits: small integers in V8, which a Map looks up without boxing them. */
function mix(hash: number, value: number): number {
  return (Math.imul(hash ^ value, 0x01000193) + 0x9e3779b9) & 0x3fffffff;
}

function stringHash(value: string): number {
  // A few characters and the length: collisions only cost an equality check on interned strings.
  let hash = mix(0x811c9dc5, value.length);
  const step = Math.max(1, value.length >> 3);
  for (let position = 0; position < value.length; position += step)
    hash = mix(hash, value.charCodeAt(position));
  return mix(hash, value.charCodeAt(value.length - 1));
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function sameArray(candidate: unknown, elements: readonly unknown[]): boolean {
  if (!Array.isArray(candidate) || candidate.length !== elements.length) return false;
  for (let position = 0; position < elements.length; position++)
    if (candidate[position] !== elements[position]) return false;
  return true;
}

function sameObject(candidate: unknown, keys: readonly string[], values: readonly unknown[]): boolean {
  if (typeof candidate !== 'object' || candidate === null || Array.isArray(candidate)) return false;
  const candidateKeys = Object.keys(candidate);
  if (candidateKeys.length !== keys.length) return false;
  const record = candidate as Record<string, unknown>;
  for (let position = 0; position < keys.length; position++)
    if (candidateKeys[position] !== keys[position] || record[keys[position]] !== values[position])
      return false;
  return true;
}

export class SharedValues {
  private readonly strings: Generations<string, string>;
  /** Given-out containers by hash; a bucket is a list only when hashes collide. */
  private readonly containers: Generations<number, object | object[]>;
  private readonly bucketMarker = new WeakSet<object[]>();
  /** JSON of an object with each set of keys seen, its values null (see `objectOf`). */
  private readonly templates = new Map<string, string>();
  /**
   * The hash of the value `shareValue` returned last. Returned beside the value, as a pair, it was
   * one short-lived object per value shared: millions over a cluster's first sync, for the collector.
   */
  private lastHash = 0;

  constructor(generationSize = DEFAULT_GENERATION_SIZE) {
    this.strings = new Generations(generationSize);
    this.containers = new Generations(generationSize);
  }

  /** Remembered strings and containers, both generations (for tests and the benchmarks). */
  get remembered(): number {
    return this.strings.size + this.containers.size;
  }

  /** The value, its repeats shared (see the module comment). Given-out containers are frozen. */
  share<Value>(value: Value): Value {
    return this.shareValue(value) as Value;
  }

  /** The value shared; its hash in `lastHash`. */
  private shareValue(value: unknown): unknown {
    if (typeof value === 'string') return this.shareString(value);
    if (typeof value === 'number') return this.hashed(value, mix(0x3, Math.trunc(value) | 0));
    if (typeof value === 'boolean') return this.hashed(value, value ? 0x5 : 0x7);
    if (typeof value !== 'object' || value === null) return this.hashed(value, 0x9);
    if (Array.isArray(value)) return this.shareArray(value);
    if (!isPlainObject(value)) return this.hashed(value, 0xb);
    return this.shareObject(value);
  }

  private hashed<Value>(value: Value, hash: number): Value {
    this.lastHash = hash;
    return value;
  }

  private shareString(value: string): string {
    let interned = this.strings.get(value);
    if (interned === undefined) {
      // A JSON round trip is the one portable way to get a flat copy of a string built by `+`.
      interned =
        value.length < SHORTEST_CONCATENATED_STRING ? value : (JSON.parse(JSON.stringify(value)) as string);
      this.strings.set(interned, interned);
    }
    return this.hashed(interned, stringHash(interned));
  }

  private shareArray(array: readonly unknown[]): readonly unknown[] {
    const elements = new Array<unknown>(array.length);
    let hash = mix(0xd, array.length);
    for (let position = 0; position < array.length; position++) {
      elements[position] = this.shareValue(array[position]);
      hash = mix(hash, this.lastHash);
    }
    const found = this.lookup(hash, (candidate) => sameArray(candidate, elements));
    if (found) return this.hashed(found as readonly unknown[], hash);
    // Array.from packs the elements in a store of exactly their number.
    const packed = Object.freeze(Array.from(elements));
    this.remember(hash, packed);
    return this.hashed(packed, hash);
  }

  private shareObject(record: Record<string, unknown>): object {
    const keys = Object.keys(record);
    const values = new Array<unknown>(keys.length);
    let hash = mix(0xf, keys.length);
    for (let position = 0; position < keys.length; position++) {
      values[position] = this.shareValue(record[keys[position]]);
      hash = mix(mix(hash, stringHash(keys[position])), this.lastHash);
    }
    const found = this.lookup(hash, (candidate) => sameObject(candidate, keys, values));
    if (found) return this.hashed(found, hash);
    const frozen = Object.freeze(this.objectOf(keys, values));
    this.remember(hash, frozen);
    return this.hashed(frozen, hash);
  }

  /**
   * A plain object with these properties, all held inside the object. An object JSON.parse builds
   * has room for exactly its properties, and every object of the same keys shares its hidden class;
   * filling such a template costs what an object literal does. `{}` then assigning each key keeps
   * only four properties inside and turns an object of 20 (a constraint) into a dictionary four
   * times the size; Object.fromEntries keeps four inside and the rest apart (measured on Node 20:
   * 5 properties 74 B vs 105 B, 20 properties 193 B vs 225 B vs 937 B).
   */
  private objectOf(keys: readonly string[], values: readonly unknown[]): Record<string, unknown> {
    const entries = () => Object.fromEntries(keys.map((key, position) => [key, values[position]]));
    // Assigning `__proto__` would set the prototype: such objects are built by defining properties.
    if (keys.includes('__proto__')) return entries();
    const signature = keys.join('\u0000');
    let template = this.templates.get(signature);
    if (template === undefined) {
      if (this.templates.size >= MOST_TEMPLATES) return entries();
      template = JSON.stringify(Object.fromEntries(keys.map((key) => [key, null])));
      this.templates.set(signature, template);
    }
    const object = JSON.parse(template) as Record<string, unknown>;
    for (let position = 0; position < keys.length; position++) object[keys[position]] = values[position];
    return object;
  }

  private lookup(hash: number, matches: (candidate: object) => boolean): object | undefined {
    const entry = this.containers.get(hash);
    if (entry === undefined) return undefined;
    if (Array.isArray(entry) && this.bucketMarker.has(entry)) return entry.find(matches);
    return matches(entry) ? entry : undefined;
  }

  private remember(hash: number, container: object): void {
    const entry = this.containers.get(hash);
    if (entry === undefined) {
      this.containers.set(hash, container);
      return;
    }
    if (Array.isArray(entry) && this.bucketMarker.has(entry)) {
      entry.push(container);
      return;
    }
    const bucket = [entry, container];
    this.bucketMarker.add(bucket);
    this.containers.set(hash, bucket);
  }
}
