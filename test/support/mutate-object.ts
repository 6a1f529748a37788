import type { KubernetesObject } from '../../services/model/kubernetes';

// Helpers for property tests of adapters: every path into a parsed manifest, and a copy of the
// manifest with the value at one path replaced.

export type ObjectPath = Array<string | number>;

/** Every path into the value, the root (`[]`) included. */
export function pathsOf(value: unknown, prefix: ObjectPath = []): ObjectPath[] {
  if (Array.isArray(value))
    return [prefix, ...value.flatMap((entry, index) => pathsOf(entry, [...prefix, index]))];
  if (typeof value === 'object' && value !== null)
    return [prefix, ...Object.entries(value).flatMap(([key, entry]) => pathsOf(entry, [...prefix, key]))];
  return [prefix];
}

/** A deep copy of the object with the value at `at` replaced. */
export function replaceAt(object: KubernetesObject, at: ObjectPath, replacement: unknown): KubernetesObject {
  if (at.length === 0) return replacement as KubernetesObject;
  const copy = structuredClone(object);
  let parent: Record<string | number, unknown> = copy;
  for (const key of at.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  parent[at[at.length - 1]] = replacement;
  return copy;
}

/** The value at `at`, or undefined where the path leads nowhere. */
export function valueAt(value: unknown, at: ObjectPath): unknown {
  let current = value;
  for (const key of at) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

/**
 * A deep copy of the object with the last key of `at` renamed (as a manifest could spell it; an
 * array index is left as it is). The entry keeps its place among its siblings.
 */
export function renameKeyAt(object: KubernetesObject, at: ObjectPath, name: string): KubernetesObject {
  const copy = structuredClone(object);
  const last = at[at.length - 1];
  const parent = valueAt(copy, at.slice(0, -1));
  if (typeof last === 'number' || Array.isArray(parent) || typeof parent !== 'object' || parent === null)
    return copy;
  const entries = Object.entries(parent).map(([key, entry]): [string, unknown] => [
    key === last ? name : key,
    entry,
  ]);
  for (const key of Object.keys(parent)) delete (parent as Record<string, unknown>)[key];
  for (const [key, entry] of entries)
    Object.defineProperty(parent, key, {
      value: entry,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return copy;
}
