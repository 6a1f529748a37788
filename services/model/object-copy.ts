// A copy of an object with some fields set: what `{ ...base, ...fields }` writes, for the code an
// admission runs once per review or per constraint.
//
// Why not the spread itself: on V8 11 (Node 20), once the code is hot, an object made by spreading and
// then given a field the spread did not copy (`{ ...base, key }`, `{ ...a, ...b }`) gets a hidden
// class (a Map and its descriptors) of its own, allocated in the old generation. One review made
// about 12 KB of them; they filled the old generation under a load of distinct reviews (58 to 202 MB
// in 8 s), which led to a full collection during the load and V8's memory reducer compacting the heap
// three times after it (the idle CPU of issue 33; docs/benchmarks.md). Object.assign onto a fresh
// literal reuses one hidden class per shape, as an object literal does.
//
// Object.assign sets fields where the spread defines them: the two differ only for an own
// `__proto__` key (a JSON document may have one), where Object.assign would change the copy's
// prototype. Such an object is copied with the spread, so the result is the spread's in every case.

/** `{ ...base, ...fields }`, without a hidden class per copy. */
export function withFields<Base extends object, Fields extends object>(
  base: Base,
  fields: Fields,
): Omit<Base, keyof Fields> & Fields {
  if (Object.hasOwn(base, '__proto__') || Object.hasOwn(fields, '__proto__')) return { ...base, ...fields };
  return Object.assign({}, base, fields);
}

/**
 * `target[key] = value` as JSON.parse and the spread define it: an own data property, even for the
 * key `__proto__`, where an assignment would change the target's prototype instead (and drop the
 * field, or make the fields of the value readable through the target). Copies of decoded documents
 * (admitted objects, policies, values computed from them) set their keys through this.
 */
export function defineField(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}
