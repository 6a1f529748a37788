import {
  groupOf,
  isRecord,
  referenceKey,
  referenceOf,
  withoutManagedFields,
  type KubernetesObject,
} from '../../model/kubernetes';
import type { ParamKindResource } from '../../model/param-kinds';
import { pluralOfKind } from '../../model/resources';

// The param objects of the configured param kinds (`--param-kinds`), kept whole for the
// ValidatingAdmissionPolicy verdicts. A kind is configured by its resource name (plural); an object
// carries its kind, so the CustomResourceDefinition that defines the kind says which plural it is
// served under and whether it is namespaced. Without the CRD (a --manifests directory holding only
// the params), the plural is the usual lower-case plural of the kind and the scope is read off the
// objects: a namespaced kind's objects have a namespace.

const CRD_GROUP = 'apiextensions.k8s.io';

interface KindDefinition {
  plural: string;
  namespaced: boolean;
}

/** The objects of one param kind, as the evaluator sees them. */
export interface ParamObjectsOfKind {
  /** undefined when neither a CRD nor an object says. */
  namespaced: boolean | undefined;
  objects: readonly KubernetesObject[];
}

function groupKindKey(group: string, kind: string): string {
  return `${group}/${kind}`;
}

export function isCustomResourceDefinition(object: KubernetesObject): boolean {
  return groupOf(object.apiVersion) === CRD_GROUP && object.kind === 'CustomResourceDefinition';
}

export class ParamObjects {
  private readonly definitions = new Map<string, KindDefinition>();
  private readonly objectsByKind = new Map<string, Map<string, KubernetesObject>>();

  constructor(
    private readonly configured: readonly ParamKindResource[] = [],
    /**
     * Every kind is a param kind (`forewarn check --manifests`): the files are the caller's own,
     * so there is no RBAC to protect, and a kind is known when the files hold its objects or CRD.
     */
    private readonly everyKind = false,
  ) {}

  /**
   * Objects of a configured group are kept whatever their kind: the CRD saying which plural a kind
   * is served under may arrive after its objects. Only configured kinds are handed to verdicts.
   */
  keepsGroup(group: string): boolean {
    return this.everyKind || this.configured.some((resource) => resource.group === group);
  }

  /** Whether a kind is a configured param kind: its group and plural are configured. */
  keepsKind(group: string, kind: string): boolean {
    if (kind === '') return false;
    if (this.everyKind) {
      const key = groupKindKey(group, kind);
      return this.definitions.has(key) || (this.objectsByKind.get(key)?.size ?? 0) > 0;
    }
    const plural = this.definitions.get(groupKindKey(group, kind))?.plural ?? pluralOfKind(kind);
    return this.configured.some((resource) => resource.group === group && resource.plural === plural);
  }

  /** Learns a CRD's kind, plural and scope; true when it defines a kind of a configured group. */
  define(crd: KubernetesObject): boolean {
    const spec = isRecord(crd.spec) ? crd.spec : {};
    const names = isRecord(spec.names) ? spec.names : {};
    if (typeof spec.group !== 'string' || typeof names.kind !== 'string' || typeof names.plural !== 'string')
      return false;
    if (!this.keepsGroup(spec.group)) return false;
    this.definitions.set(groupKindKey(spec.group, names.kind), {
      plural: names.plural,
      namespaced: spec.scope !== 'Cluster',
    });
    return true;
  }

  /** Forgets a param kind's definition; true when there was one (what a param's scope reads changed). */
  undefine(crd: KubernetesObject): boolean {
    const spec = isRecord(crd.spec) ? crd.spec : {};
    const names = isRecord(spec.names) ? spec.names : {};
    return (
      typeof spec.group === 'string' &&
      typeof names.kind === 'string' &&
      this.definitions.delete(groupKindKey(spec.group, names.kind))
    );
  }

  upsert(object: KubernetesObject): void {
    const key = groupKindKey(groupOf(object.apiVersion), object.kind ?? '');
    let objects = this.objectsByKind.get(key);
    if (!objects) {
      objects = new Map();
      this.objectsByKind.set(key, objects);
    }
    // Verdicts read the params' fields, never field ownership.
    objects.set(referenceKey(referenceOf(object)), withoutManagedFields(object));
  }

  /** Removes the object; false when it was not kept. */
  remove(object: KubernetesObject): boolean {
    const key = groupKindKey(groupOf(object.apiVersion), object.kind ?? '');
    return this.objectsByKind.get(key)?.delete(referenceKey(referenceOf(object))) ?? false;
  }

  /** The kept objects of a configured kind; undefined when the kind is not configured. */
  ofKind(group: string, kind: string): ParamObjectsOfKind | undefined {
    if (!this.keepsKind(group, kind)) return undefined;
    const key = groupKindKey(group, kind);
    const objects = [...(this.objectsByKind.get(key)?.values() ?? [])];
    const defined = this.definitions.get(key)?.namespaced;
    return { namespaced: defined ?? namespacedByObjects(objects), objects };
  }
}

/** A kind's scope as its objects show it, when there are any. */
export function namespacedByObjects(objects: readonly KubernetesObject[]): boolean | undefined {
  if (objects.length === 0) return undefined;
  return objects.some((object) => typeof object.metadata?.namespace === 'string');
}
