import { CONSTRAINT_TYPES, type ConstraintType } from '../../model/api';
import type { Constraint, ResourceTarget } from '../../model/constraint';
import { targetsInclude } from '../../model/resources';
import {
  groupOf,
  referenceKey,
  referenceOf,
  withoutManagedFields,
  type KubernetesObject,
  type Labels,
} from '../../model/kubernetes';
import { generatedReferenceKey, opaqueReference } from '../../model/opaque-reference';
import { SharedValues } from './shared-values';
import { templatedConstraint } from './constraint-texts';
import type { ParamKindResource } from '../../model/param-kinds';
import { namespacedByObjects, ParamObjects, type ParamObjectsOfKind } from './param-objects';
import { NAMESPACE_NAME_LABEL, scopeAdmits, selectorUndecidedHere } from './namespace-scope';

export { scopeAdmits } from './namespace-scope';

// The in-memory index. Constraints are stored per source object (so an update replaces the object's
// whole set and a delete removes it) and per namespace (so a namespace's lookups cost what that
// namespace holds). Cluster-scoped constraints are few; which of them a namespace admits is cached
// per namespace and recomputed only when they or that namespace's labels change.

export interface WorkloadRecord {
  kind: string;
  name: string;
  namespace: string;
  /** Labels of the pods the workload creates (pod template labels; a bare Pod's own labels). */
  podLabels: Labels;
}

function sourceReferenceKey(object: KubernetesObject): string {
  return referenceKey(referenceOf(object));
}

function sourceKindKey(object: KubernetesObject): string {
  return `${groupOf(object.apiVersion)}/${object.kind ?? ''}`;
}

/** The constraints of a `byObject` entry (constraints are plain objects, never arrays). */
function constraintsOf(entry: Constraint | readonly Constraint[]): readonly Constraint[] {
  return Array.isArray(entry) ? (entry as readonly Constraint[]) : [entry as Constraint];
}

/** The constraint as it applies in one namespace: its per-namespace outcome, when one admits it. */
export function inNamespace(constraint: Constraint, namespace: string, labels: Labels): Constraint {
  const outcome = constraint.namespaceOutcomes?.find((candidate) =>
    scopeAdmits(candidate.scope, namespace, labels),
  );
  if (outcome === undefined) return constraint;
  return {
    ...constraint,
    severity: outcome.severity,
    effect: outcome.effect,
    summary: outcome.summary,
    remediationHint: outcome.remediationHint,
    remediation: { ...constraint.remediation, summary: outcome.remediationHint },
    tags: outcome.tags,
  };
}

export interface ConstraintIndexOptions {
  /** The configured param kinds (`--param-kinds`) whose objects are kept for the verdicts. */
  paramKinds?: readonly ParamKindResource[];
  /** Every kind's objects may be params (offline: the caller's own files, no RBAC to protect). */
  paramsOfEveryKind?: boolean;
  /**
   * The per-installation secret of the constraints' opaque references (model/opaque-reference.ts);
   * absent, a random one: references are then stable only for this process.
   */
  opaqueReferenceKey?: Uint8Array;
}

export class ConstraintIndex {
  private readonly opaqueReferenceKey: Uint8Array;
  /** Options of an overlay (index-overlay.ts): this index's reference key, so that its refs agree. */
  overlayOptions = (): ConstraintIndexOptions => ({ opaqueReferenceKey: this.opaqueReferenceKey });
  private readonly byReference = new Map<string, Constraint>();
  /** A source object's constraints; a lone one without an array around it (most objects have one). */
  private readonly byObject = new Map<string, Constraint | readonly Constraint[]>();
  /** The source objects themselves, for verdicts (quota figures, CEL, patterns): by key and by reference. */
  private readonly sources = new Map<string, KubernetesObject>();
  private readonly sourcesByReference = new Map<string, KubernetesObject>();
  /**
   * The same objects by group and kind, for the kinds asked for as params (`paramsOfKind`) only:
   * built from `sources` on the first request, kept up to date from then on. A map per kind of
   * every source cost ~30 bytes per constraint for the few kinds any policy takes as params.
   */
  private readonly sourcesByKind = new Map<string, Map<string, KubernetesObject>>();
  private readonly byNamespace = new Map<string, Map<string, Constraint>>();
  private readonly clusterWide = new Map<string, Constraint>();
  private admittedClusterWide = new Map<string, Constraint[]>();
  private readonly namespaceLabels = new Map<string, Labels>();
  /**
   * A namespace's workloads: the lone one itself (a map of one cost ~200 bytes, for each of 5,000
   * namespaces at cluster scale), or a map by kind and name.
   */
  private readonly workloads = new Map<string, WorkloadRecord | Map<string, WorkloadRecord>>();
  private readonly typeCounts = new Map<ConstraintType, number>();
  private changeCounter = 0;
  /** What repeats across constraints and kept sources is held once (shared-values.ts). */
  private readonly shared = new SharedValues();

  constructor(options: ConstraintIndexOptions = {}) {
    this.opaqueReferenceKey = options.opaqueReferenceKey ?? generatedReferenceKey();
    this.params = new ParamObjects(options.paramKinds, options.paramsOfEveryKind === true);
  }

  /** Param objects of the configured param kinds (`--param-kinds`), filled by the ingest layer. */
  private readonly params: ParamObjects;

  keepsParamGroup(group: string): boolean {
    return this.params.keepsGroup(group);
  }

  /** A CRD that may define a configured param kind (its plural and scope). */
  defineParamKind(crd: KubernetesObject, removed: boolean): void {
    // Either way the answers that read the kind's scope may change: remembered ones must not outlive it.
    if (removed ? this.params.undefine(crd) : this.params.define(crd)) this.changeCounter++;
  }

  upsertParam(object: KubernetesObject): void {
    this.params.upsert(object);
    this.changeCounter++;
  }

  removeParam(object: KubernetesObject): void {
    if (this.params.remove(object)) this.changeCounter++;
  }

  /**
   * The objects a ValidatingAdmissionPolicy may take as params of a kind: a configured param kind's,
   * else the kept source objects of that kind (a Gatekeeper constraint as the param, as Gatekeeper's
   * own VAP integration binds them); undefined when the index reads no object of the kind.
   */
  paramsOfKind(group: string, kind: string): ParamObjectsOfKind | undefined {
    const configured = this.params.ofKind(group, kind);
    if (configured && configured.objects.length > 0) return configured;
    const sources = [...this.sourcesOfKind(`${group}/${kind}`).values()];
    if (configured && sources.length === 0) return configured;
    return sources.length === 0 ? undefined : { namespaced: namespacedByObjects(sources), objects: sources };
  }

  /** The kept sources of a kind, in the order `sources` holds them; tracked from the first request. */
  private sourcesOfKind(kindKey: string): Map<string, KubernetesObject> {
    let ofKind = this.sourcesByKind.get(kindKey);
    if (ofKind === undefined) {
      ofKind = new Map();
      for (const [key, source] of this.sources)
        if (sourceKindKey(source) === kindKey) ofKind.set(key, source);
      this.sourcesByKind.set(kindKey, ofKind);
    }
    return ofKind;
  }

  /** Increases on every change; lets callers cache derived values. */
  get revision(): number {
    return this.changeCounter;
  }

  /**
   * Replaces every constraint of one source object (an empty list removes them). The source object
   * is kept when given, even without constraints (a ValidatingAdmissionPolicy its bindings name).
   */
  replaceObject(objectKey: string, constraints: readonly Constraint[], source?: KubernetesObject): void {
    this.removeObject(objectKey);
    if (source) {
      // Verdicts read specs, params and annotations, never field ownership: it is not kept.
      const kept = this.shared.share(withoutManagedFields(source));
      const sharedKey = this.shared.share(objectKey);
      this.sources.set(sharedKey, kept);
      this.sourcesByReference.set(this.shared.share(sourceReferenceKey(kept)), kept);
      this.sourcesByKind.get(sourceKindKey(kept))?.set(sharedKey, kept);
    }
    if (constraints.length === 0) return;
    // Every indexed constraint carries its opaque reference, so views show it wherever they redact the name.
    // Their texts are kept as templates filled from the source when read (constraint-texts.ts).
    const share = <Value>(value: Value): Value => this.shared.share(value);
    const referenced = constraints.map((constraint) =>
      templatedConstraint(
        { ...constraint, ref: opaqueReference(this.opaqueReferenceKey, constraint.id) },
        share,
      ),
    );
    this.byObject.set(this.shared.share(objectKey), referenced.length === 1 ? referenced[0] : referenced);
    for (const constraint of referenced) {
      this.byReference.set(constraint.ref, constraint);
      if (constraint.scope.kind === 'namespace') {
        let namespaceConstraints = this.byNamespace.get(constraint.scope.namespace);
        if (!namespaceConstraints) {
          namespaceConstraints = new Map();
          this.byNamespace.set(constraint.scope.namespace, namespaceConstraints);
        }
        namespaceConstraints.set(constraint.id, constraint);
      } else {
        this.clusterWide.set(constraint.id, constraint);
        this.admittedClusterWide.clear();
      }
      this.typeCounts.set(constraint.type, (this.typeCounts.get(constraint.type) ?? 0) + 1);
    }
    this.changeCounter++;
  }

  removeObject(objectKey: string): void {
    const source = this.sources.get(objectKey);
    if (source) {
      this.sources.delete(objectKey);
      this.sourcesByReference.delete(sourceReferenceKey(source));
      this.sourcesByKind.get(sourceKindKey(source))?.delete(objectKey);
    }
    const existing = this.byObject.get(objectKey);
    if (!existing) return;
    this.byObject.delete(objectKey);
    for (const constraint of constraintsOf(existing)) {
      if (constraint.ref !== undefined) this.byReference.delete(constraint.ref);
      if (constraint.scope.kind === 'namespace') {
        const namespaceConstraints = this.byNamespace.get(constraint.scope.namespace);
        namespaceConstraints?.delete(constraint.id);
        if (namespaceConstraints?.size === 0) this.byNamespace.delete(constraint.scope.namespace);
      } else {
        this.clusterWide.delete(constraint.id);
        this.admittedClusterWide.clear();
      }
      this.typeCounts.set(constraint.type, (this.typeCounts.get(constraint.type) ?? 1) - 1);
    }
    this.changeCounter++;
  }

  /** The source object a constraint came from (its id starts with the object's key). */
  sourceOfConstraint(constraint: Pick<Constraint, 'id'>): KubernetesObject | undefined {
    const separator = constraint.id.indexOf('#');
    return separator === -1 ? undefined : this.sources.get(constraint.id.slice(0, separator));
  }

  findSource(
    group: string,
    kind: string,
    namespace: string | null,
    name: string,
  ): KubernetesObject | undefined {
    return this.sourcesByReference.get(referenceKey({ group, kind, namespace, name }));
  }

  hasObject(objectKey: string): boolean {
    return this.byObject.has(objectKey);
  }

  objectKeys(): string[] {
    return [...this.byObject.keys()];
  }

  setNamespace(name: string, labels: Labels): void {
    this.namespaceLabels.set(name, { ...labels, [NAMESPACE_NAME_LABEL]: name });
    this.admittedClusterWide.delete(name);
    this.changeCounter++;
  }

  removeNamespace(name: string): void {
    this.namespaceLabels.delete(name);
    this.admittedClusterWide.delete(name);
    this.changeCounter++;
  }

  /** Labels of a namespace; an unknown namespace has only the name label the API server sets. */
  labelsOfNamespace(name: string): Labels {
    return this.namespaceLabels.get(name) ?? { [NAMESPACE_NAME_LABEL]: name };
  }

  knownNamespaces(): string[] {
    return [...this.namespaceLabels.keys()];
  }

  setWorkload(record: WorkloadRecord): void {
    const namespaceWorkloads = this.workloads.get(record.namespace);
    if (namespaceWorkloads === undefined) this.workloads.set(record.namespace, record);
    else if (namespaceWorkloads instanceof Map)
      namespaceWorkloads.set(`${record.kind}/${record.name}`, record);
    else if (namespaceWorkloads.kind === record.kind && namespaceWorkloads.name === record.name)
      this.workloads.set(record.namespace, record);
    else
      this.workloads.set(
        record.namespace,
        new Map([
          [`${namespaceWorkloads.kind}/${namespaceWorkloads.name}`, namespaceWorkloads],
          [`${record.kind}/${record.name}`, record],
        ]),
      );
    this.changeCounter++;
  }

  removeWorkload(namespace: string, kind: string, name: string): void {
    const namespaceWorkloads = this.workloads.get(namespace);
    if (namespaceWorkloads === undefined) return;
    if (!(namespaceWorkloads instanceof Map)) {
      if (namespaceWorkloads.kind !== kind || namespaceWorkloads.name !== name) return;
      this.workloads.delete(namespace);
    } else {
      if (!namespaceWorkloads.delete(`${kind}/${name}`)) return;
      if (namespaceWorkloads.size === 1)
        this.workloads.set(namespace, namespaceWorkloads.values().next().value as WorkloadRecord);
    }
    this.changeCounter++;
  }

  workloadsInNamespace(namespace: string): WorkloadRecord[] {
    const namespaceWorkloads = this.workloads.get(namespace);
    if (namespaceWorkloads === undefined) return [];
    return namespaceWorkloads instanceof Map ? [...namespaceWorkloads.values()] : [namespaceWorkloads];
  }

  /** Every constraint that applies to the namespace, unsorted: its own plus admitted cluster-wide ones. */
  constraintsForNamespace(namespace: string): Constraint[] {
    const own = this.byNamespace.get(namespace);
    const admitted = this.clusterWideAdmittedBy(namespace);
    if (!own) return [...admitted];
    return admitted.length === 0 ? [...own.values()] : [...own.values(), ...admitted];
  }

  private clusterWideAdmittedBy(namespace: string): Constraint[] {
    if (this.clusterWide.size === 0) return [];
    let admitted = this.admittedClusterWide.get(namespace);
    if (!admitted) {
      const labels = this.labelsOfNamespace(namespace);
      const known = this.namespaceLabels.has(namespace);
      admitted = [...this.clusterWide.values()]
        .filter(
          (constraint) =>
            scopeAdmits(constraint.scope, namespace, labels) ||
            (!known && selectorUndecidedHere(constraint, namespace, labels)),
        )
        .map((constraint) => inNamespace(constraint, namespace, labels));
      this.admittedClusterWide.set(namespace, admitted);
    }
    return admitted;
  }

  /** The number of constraints in the index, each counted once. */
  totalConstraints(): number {
    let total = 0;
    for (const count of this.typeCounts.values()) total += count;
    return total;
  }

  countsByType(): Record<ConstraintType, number> {
    const counts = Object.fromEntries(CONSTRAINT_TYPES.map((type) => [type, 0])) as Record<
      ConstraintType,
      number
    >;
    for (const [type, count] of this.typeCounts) counts[type] = count;
    return counts;
  }

  /** Namespaces with at least one constraint: their own, or a cluster-wide one they admit. */
  namespacesWithConstraints(): string[] {
    const namespaces = new Set(this.byNamespace.keys());
    for (const namespace of this.namespaceLabels.keys()) {
      if (!namespaces.has(namespace) && this.clusterWideAdmittedBy(namespace).length > 0)
        namespaces.add(namespace);
    }
    return [...namespaces];
  }

  /**
   * Cluster-wide constraints that intercept this resource: what a cluster-scoped object (a Namespace,
   * a ClusterRole) meets. Only those that name their resources: the others are about pods.
   */
  constraintsTargetingClusterResource(resource: ResourceTarget): Constraint[] {
    return [...this.clusterWide.values()].filter(
      (constraint) =>
        constraint.resourceTargets !== undefined && targetsInclude(constraint.resourceTargets, resource),
    );
  }

  /** The indexed constraint with this opaque reference, whatever its namespace. */
  constraintByReference(ref: string): Constraint | undefined {
    return this.byReference.get(ref);
  }

  allConstraints(): Constraint[] {
    return [...this.byObject.values()].flat();
  }

  constraintsOfObject(objectKey: string): readonly Constraint[] {
    const entry = this.byObject.get(objectKey);
    return entry === undefined ? [] : constraintsOf(entry);
  }
}
