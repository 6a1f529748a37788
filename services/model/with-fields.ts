// `{ ...base, ...fields }` for plain data objects, built so that V8 can share hidden classes.
//
// Node 20's V8 gives every object made by a spread followed by more properties (`{ ...base, key }`,
// `{ ...base, ...other }`, or a property added to a spread copy later) a hidden class of its own:
// measured, such an object costs about 0.4 µs to make with one more key and 7 µs with four, and
// every later read of one misses the inline caches of the code reading it (2 µs for two reads of a
// copy against nanoseconds). On the admission check's path, where such copies are made per rule and
// per list element and read by every evaluator, that was a fifth of the controller's evaluation time
// (docs/decisions.md, "The admission check's evaluation without per-object hidden classes"). Copying
// key by key onto a fresh literal takes the transitions every other copy took, so the copies share
// one hidden class.

/** The spread type of `{ ...base, ...fields }`. */
export type WithFields<Base, Fields> = Omit<Base, keyof Fields> & Fields;

function define(target: Record<string, unknown>, key: string, value: unknown): void {
  // A JSON object may hold an own `__proto__` key: a spread defines it, an assignment would set
  // the copy's prototype instead.
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

/**
 * What `{ ...base, ...fields }` makes for objects without symbol keys: base's own enumerable keys in
 * their order, then those of `fields`; a key of both keeps its place in base with the value in
 * `fields`. Getters are read, as a spread reads them.
 */
export function withFields<Base extends object, Fields extends object>(
  base: Base,
  fields: Fields,
): WithFields<Base, Fields> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(base)) define(copy, key, (base as Record<string, unknown>)[key]);
  for (const key of Object.keys(fields)) define(copy, key, (fields as Record<string, unknown>)[key]);
  return copy as WithFields<Base, Fields>;
}
