import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { KubernetesObject } from '../../services/model/kubernetes';

/** Every document of a multi-document YAML fixture file, by `metadata.name`. */
export function loadFixtureObjects(path: string): Map<string, KubernetesObject> {
  const objects = new Map<string, KubernetesObject>();
  for (const document of parseAllDocuments(readFileSync(path, 'utf8'))) {
    if (document.errors.length > 0) throw new Error(`${path}: ${document.errors[0].message}`);
    const object = document.toJS() as KubernetesObject | null;
    if (!object) continue;
    const name = object.metadata?.name ?? `document-${objects.size}`;
    if (objects.has(name)) throw new Error(`${path}: two fixtures named ${name}`);
    objects.set(name, object);
  }
  return objects;
}

/** One named fixture, failing loudly when it is missing. */
export function fixture(objects: Map<string, KubernetesObject>, name: string): KubernetesObject {
  const object = objects.get(name);
  if (!object) throw new Error(`no fixture named ${name}`);
  return object;
}
