import type { Constraint, ResourceTarget } from '../../model/constraint';
import { objectKey, type KubernetesObject, type Labels } from '../../model/kubernetes';
import { ConstraintIndex, type WorkloadRecord } from './constraint-index';
import type { ParamObjectsOfKind } from './param-objects';

// A copy-on-write overlay of the index (issue 35, `POST /api/v1/impact`): proposed policy objects
// are ingested into it as into the index, and every read sees the index with those objects
// replaced, while the index itself is never written. Its own storage (the inherited maps) holds only
// what was written to the overlay; an object written here hides the index's version of it (by key).

/** The index key of the source object a constraint came from (its id up to `#`). */
function sourceKeyOf(constraint: Pick<Constraint, 'id'>): string {
  const separator = constraint.id.indexOf('#');
  return separator === -1 ? constraint.id : constraint.id.slice(0, separator);
}

export class IndexOverlay extends ConstraintIndex {
  /** Keys of the index's objects the overlay replaced or removed. */
  private readonly hidden = new Set<string>();
  private readonly overlaidNamespaces = new Set<string>();

  constructor(private readonly base: ConstraintIndex) {
    super(base.overlayOptions());
  }

  /**
   * Moves with the overlay's own writes and with the index under it, since reads combine both: what
   * is kept per revision (the verdicts' view of the index, a namespace's sorted constraints) must
   * not outlive a change of the index while an impact request yields between slices.
   */
  override get revision(): number {
    return super.revision + this.base.revision;
  }

  /** Every source object key written to the overlay. */
  overlaidKeys(): ReadonlySet<string> {
    return this.hidden;
  }

  /** The namespaces whose labels the overlay changed (a proposed Namespace's Pod Security labels). */
  overlaidNamespaceNames(): ReadonlySet<string> {
    return this.overlaidNamespaces;
  }

  private visible = (constraint: Constraint): boolean => !this.hidden.has(sourceKeyOf(constraint));

  override replaceObject(key: string, constraints: readonly Constraint[], source?: KubernetesObject): void {
    this.hidden.add(key);
    super.replaceObject(key, constraints, source);
  }

  override removeObject(key: string): void {
    this.hidden.add(key);
    super.removeObject(key);
  }

  override setNamespace(name: string, labels: Labels): void {
    this.overlaidNamespaces.add(name);
    super.setNamespace(name, labels);
  }

  override removeNamespace(name: string): void {
    this.overlaidNamespaces.add(name);
    super.removeNamespace(name);
  }

  // Workloads and params are the cluster's, not policies: a proposal does not change them.
  override setWorkload(): void {}
  override removeWorkload(): void {}
  override upsertParam(): void {}
  override removeParam(): void {}
  override defineParamKind(): void {}

  override keepsParamGroup(group: string): boolean {
    return this.base.keepsParamGroup(group);
  }

  override paramsOfKind(group: string, kind: string): ParamObjectsOfKind | undefined {
    return super.paramsOfKind(group, kind) ?? this.base.paramsOfKind(group, kind);
  }

  override constraintsForNamespace(namespace: string): Constraint[] {
    return [
      ...this.base.constraintsForNamespace(namespace).filter(this.visible),
      ...super.constraintsForNamespace(namespace),
    ];
  }

  override constraintsTargetingClusterResource(resource: ResourceTarget): Constraint[] {
    return [
      ...this.base.constraintsTargetingClusterResource(resource).filter(this.visible),
      ...super.constraintsTargetingClusterResource(resource),
    ];
  }

  override sourceOfConstraint(constraint: Pick<Constraint, 'id'>): KubernetesObject | undefined {
    const key = sourceKeyOf(constraint);
    return this.hidden.has(key)
      ? super.sourceOfConstraint(constraint)
      : this.base.sourceOfConstraint(constraint);
  }

  override findSource(
    group: string,
    kind: string,
    namespace: string | null,
    name: string,
  ): KubernetesObject | undefined {
    const own = super.findSource(group, kind, namespace, name);
    if (own) return own;
    const found = this.base.findSource(group, kind, namespace, name);
    return found && !this.hidden.has(objectKey(found)) ? found : undefined;
  }

  override labelsOfNamespace(name: string): Labels {
    return this.overlaidNamespaces.has(name)
      ? super.labelsOfNamespace(name)
      : this.base.labelsOfNamespace(name);
  }

  override knownNamespaces(): string[] {
    return [...new Set([...this.base.knownNamespaces(), ...super.knownNamespaces()])];
  }

  override hasObject(key: string): boolean {
    return super.hasObject(key) || (!this.hidden.has(key) && this.base.hasObject(key));
  }

  override constraintsOfObject(key: string): readonly Constraint[] {
    return this.hidden.has(key) ? super.constraintsOfObject(key) : this.base.constraintsOfObject(key);
  }

  override constraintByReference(ref: string): Constraint | undefined {
    const own = super.constraintByReference(ref);
    if (own) return own;
    const found = this.base.constraintByReference(ref);
    return found && this.visible(found) ? found : undefined;
  }

  override allConstraints(): Constraint[] {
    return [...this.base.allConstraints().filter(this.visible), ...super.allConstraints()];
  }

  override workloadsInNamespace(namespace: string): WorkloadRecord[] {
    return this.base.workloadsInNamespace(namespace);
  }

  override namespacesWithConstraints(): string[] {
    return [...new Set([...this.base.namespacesWithConstraints(), ...super.namespacesWithConstraints()])];
  }
}
