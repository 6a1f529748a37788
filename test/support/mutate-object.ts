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
