import { isSeverity, type AdapterName } from '../../model/api';
import {
  AdapterParseError,
  type Adapter,
  type AdapterContext,
  type Constraint,
  type ConstraintDraft,
  type SourceObject,
} from '../../model/constraint';
import {
  groupOf,
  isStringRecord,
  objectKey,
  referenceKey,
  referenceOf,
  withoutManagedFields,
  type KubernetesObject,
} from '../../model/kubernetes';
import {
  isRepresentedByOwner,
  workloadKind,
  workloadLabels,
  type WorkloadKind,
} from '../../model/workload-kinds';
import { describeObject } from '../adapters/shared/object-fields';
import type { PodSecurityDefaults, PodSecurityExemptions } from '../../model/pod-security';
import type { AdapterRegistry } from '../adapters/registry';
import type { ConstraintIndex } from './constraint-index';
import { scopeReachingTargets } from '../../model/resource-scope';
import { isCustomResourceDefinition } from './param-objects';

// The bridge between sources (files, watches) and the index: routes each object to its adapter,
// stamps observation time, applies the `forewarn.io/*` annotation overrides, records workloads and
// namespaces, and turns an adapter's failure into a counted parse error instead of a crash.

export const ANNOTATION_CONTACT = 'forewarn.io/contact';
export const ANNOTATION_SEVERITY = 'forewarn.io/severity';
export const ANNOTATION_SUMMARY = 'forewarn.io/summary';

export interface IngestSettings {
  defaultContact: string;
  ownWebhookName: string;
  meshRootNamespace: string;
  podSecurityDefaults?: PodSecurityDefaults;
  podSecurityExemptions?: PodSecurityExemptions;
}

export const DEFAULT_INGEST_SETTINGS: IngestSettings = {
  defaultContact: 'platform-team@example.com',
  ownWebhookName: 'forewarn-webhook',
  meshRootNamespace: 'istio-system',
};

export interface ParseErrorRecord {
  adapter: AdapterName;
  object: string;
  message: string;
  at: string;
}

/**
 * Parse errors per adapter. `error_count` in health counts them since start; the objects failing
 * right now make health `degraded` until they are fixed or deleted. (DESIGN.md says "since the last
 * scan"; tracking the objects themselves is the same signal without depending on scan timing, and
 * an unchanged broken object keeps health degraded instead of silently clearing.)
 */
export class ParseErrorCounter {
  private readonly sinceStart = new Map<AdapterName, number>();
  private readonly failing = new Map<string, ParseErrorRecord>();
  private readonly listeners: Array<(record: ParseErrorRecord) => void> = [];

  record(objectKey: string, record: ParseErrorRecord): void {
    this.sinceStart.set(record.adapter, (this.sinceStart.get(record.adapter) ?? 0) + 1);
    this.failing.set(objectKey, record);
    for (const listener of this.listeners) listener(record);
  }

  /** The object parsed again, or is gone. */
  clear(objectKey: string): void {
    this.failing.delete(objectKey);
  }

  onError(listener: (record: ParseErrorRecord) => void): void {
    this.listeners.push(listener);
  }

  totalFor(adapter: AdapterName): number {
    return this.sinceStart.get(adapter) ?? 0;
  }

  failingFor(adapter: AdapterName): number {
    let count = 0;
    for (const record of this.failing.values()) if (record.adapter === adapter) count++;
    return count;
  }

  /** The objects that fail to parse right now, oldest first. */
  failingObjects(): ParseErrorRecord[] {
    return [...this.failing.values()];
  }
}

/** The workload kinds named in `affected_workloads`. */
function listedWorkload(group: string, kind: string): WorkloadKind | undefined {
  const entry = workloadKind(group, kind);
  return entry?.listed ? entry : undefined;
}

/** Index key of what an adapter reads from a Namespace's annotations, apart from its own kind's. */
function namespaceReaderKey(object: KubernetesObject, adapter: Adapter): string {
  return `${objectKey(object)}@${adapter.name}`;
}

export type IngestListener = (object: KubernetesObject, removed: boolean) => void;

/** The objects an evaluation looked up, other than the object itself, once each (`relatedSources`). */
function relatedSources(object: KubernetesObject, lookedUp: readonly KubernetesObject[]): SourceObject[] {
  const own = referenceKey(referenceOf(object));
  const related = new Map<string, SourceObject>();
  for (const other of lookedUp) {
    const reference = referenceOf(other);
    const key = referenceKey(reference);
    if (key === own || related.has(key)) continue;
    related.set(key, {
      kind: reference.kind,
      apiVersion: other.apiVersion ?? '',
      name: reference.name,
      namespace: reference.namespace,
    });
  }
  return [...related.values()];
}

export class Ingestor {
  private readonly retained = new Map<string, KubernetesObject>();
  private readonly listeners: IngestListener[] = [];

  /** Sees every object change, whatever its kind (the companion-resource inventory uses it). */
  onChange(listener: IngestListener): void {
    this.listeners.push(listener);
  }

  private notify(object: KubernetesObject, removed: boolean): void {
    for (const listener of this.listeners) listener(object, removed);
  }
  private readonly retainedKeys = new Map<AdapterName, Set<string>>();

  constructor(
    private readonly index: ConstraintIndex,
    private readonly registry: AdapterRegistry,
    readonly errors: ParseErrorCounter = new ParseErrorCounter(),
    private readonly settings: IngestSettings = DEFAULT_INGEST_SETTINGS,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /**
   * An ingestor writing to `index` (an overlay of this one's index, index-overlay.ts) that starts
   * from this one's retained objects: a proposed policy is then bound to the bindings, templates and
   * constraints already in the cluster, as it would be once applied. This one is not changed.
   */
  overlay(index: ConstraintIndex, errors: ParseErrorCounter): Ingestor {
    const copy = new Ingestor(index, this.registry, errors, this.settings, this.clock);
    for (const [key, object] of this.retained) copy.retained.set(key, object);
    for (const [adapter, keys] of this.retainedKeys) copy.retainedKeys.set(adapter, new Set(keys));
    return copy;
  }

  /** Adds or replaces an object. Returns the adapter that handled it, if any. */
  upsert(object: KubernetesObject): AdapterName | undefined {
    const handledBy = this.upsertIntoIndex(object);
    this.notify(object, false);
    return handledBy;
  }

  private upsertIntoIndex(object: KubernetesObject): AdapterName | undefined {
    const group = groupOf(object.apiVersion);
    const kind = object.kind ?? '';
    const rawName: unknown = object.metadata?.name;
    // Objects from files or fuzzers may carry anything; adapters report bad names as parse errors.
    const name = typeof rawName === 'string' ? rawName : '';
    if (group === '' && kind === 'Namespace') return name ? this.upsertNamespace(object, name) : undefined;
    const workload = listedWorkload(group, kind);
    if (workload) {
      if (!name) return undefined;
      const namespace =
        typeof object.metadata?.namespace === 'string' ? object.metadata.namespace : 'default';
      // Pods of a ReplicaSet or Jobs of a CronJob are represented by their owner.
      if (isRepresentedByOwner(workload, object)) this.index.removeWorkload(namespace, kind, name);
      else this.index.setWorkload({ kind, name, namespace, podLabels: workloadLabels(workload, object) });
      return undefined;
    }
    const adapter = this.registry.adapterFor(group, kind);
    if (!adapter) {
      this.keepParam(object, group, false);
      return undefined;
    }
    if (this.isRetained(adapter, group, kind)) {
      this.retain(adapter, object);
      this.reevaluateRetained(adapter);
    } else {
      this.evaluate(adapter, object);
    }
    return adapter.name;
  }

  delete(object: KubernetesObject): void {
    this.deleteFromIndex(object);
    this.notify(object, true);
  }

  private deleteFromIndex(object: KubernetesObject): void {
    const { group, kind, name, namespace } = referenceOf(object);
    if (group === '' && kind === 'Namespace') {
      this.index.removeNamespace(name);
      for (const key of [
        objectKey(object),
        ...this.namespaceReaders().map((reader) => namespaceReaderKey(object, reader)),
      ]) {
        this.index.removeObject(key);
        this.errors.clear(key);
      }
      return;
    }
    if (listedWorkload(group, kind)) {
      this.index.removeWorkload(namespace ?? 'default', kind, name);
      return;
    }
    this.index.removeObject(objectKey(object));
    this.errors.clear(objectKey(object));
    const adapter = this.registry.adapterFor(group, kind);
    if (!adapter) this.keepParam(object, group, true);
    if (adapter && this.isRetained(adapter, group, kind)) {
      const key = this.retainedKey(object);
      this.retained.delete(key);
      this.retainedKeys.get(adapter.name)?.delete(key);
      this.reevaluateRetained(adapter);
    }
  }

  /** ValidatingAdmissionPolicy params of a configured kind, and the CRDs that define those kinds. */
  private keepParam(object: KubernetesObject, group: string, removed: boolean): void {
    if (isCustomResourceDefinition(object)) this.index.defineParamKind(object, removed);
    else if (removed) this.index.removeParam(object);
    else if (this.index.keepsParamGroup(group)) this.index.upsertParam(object);
  }

  private isRetained(adapter: Adapter, group: string, kind: string): boolean {
    // `*`: every kind of the group (Gatekeeper's constraint kinds are discovered at run time).
    return (adapter.retainedKinds ?? []).some(
      (retained) => retained.group === group && (retained.kind === kind || retained.kind === '*'),
    );
  }

  private retainedKey(object: KubernetesObject): string {
    return referenceKey(referenceOf(object));
  }

  private retain(adapter: Adapter, object: KubernetesObject): void {
    const key = this.retainedKey(object);
    this.retained.set(key, withoutManagedFields(object));
    let keys = this.retainedKeys.get(adapter.name);
    if (!keys) {
      keys = new Set();
      this.retainedKeys.set(adapter.name, keys);
    }
    keys.add(key);
  }

  private reevaluateRetained(adapter: Adapter): void {
    for (const key of this.retainedKeys.get(adapter.name) ?? []) {
      const object = this.retained.get(key);
      if (object) this.evaluate(adapter, object);
    }
  }

  /** The context of one evaluation; every object an adapter looks up is added to `lookedUp`. */
  private context(lookedUp: KubernetesObject[]): AdapterContext {
    const seen = <T extends KubernetesObject | undefined>(object: T): T => {
      if (object) lookedUp.push(object);
      return object;
    };
    return {
      defaultContact: this.settings.defaultContact,
      ownWebhookName: this.settings.ownWebhookName,
      meshRootNamespace: this.settings.meshRootNamespace,
      podSecurityDefaults: this.settings.podSecurityDefaults,
      podSecurityExemptions: this.settings.podSecurityExemptions,
      lookup: (groupKind, namespace, name) =>
        seen(
          this.retained.get(referenceKey({ group: groupKind.group, kind: groupKind.kind, namespace, name })),
        ),
      lookupAll: (groupKind, namespace) => {
        const prefix =
          namespace === undefined
            ? `${groupKind.group}/${groupKind.kind}/`
            : referenceKey({ group: groupKind.group, kind: groupKind.kind, namespace, name: '' });
        return [...this.retained].filter(([key]) => key.startsWith(prefix)).map(([, object]) => seen(object));
      },
    };
  }

  /**
   * Namespaces are inventory (labels for selectors) and policy sources: the adapter routed the kind
   * (Pod Security Admission labels) and every adapter reading namespace annotations (Linkerd's
   * default inbound policy), each under its own index key.
   */
  private upsertNamespace(object: KubernetesObject, name: string): AdapterName | undefined {
    this.index.setNamespace(name, isStringRecord(object.metadata?.labels) ? object.metadata.labels : {});
    for (const reader of this.namespaceReaders())
      this.evaluate(reader, object, namespaceReaderKey(object, reader), reader.namespaceConstraints);
    const namespaceAdapter = this.registry.adapterFor('', 'Namespace');
    if (!namespaceAdapter) return undefined;
    this.evaluate(namespaceAdapter, object);
    return namespaceAdapter.name;
  }

  private namespaceReaders(): Array<Adapter & Required<Pick<Adapter, 'namespaceConstraints'>>> {
    return this.registry.adapters.filter(
      (adapter): adapter is Adapter & Required<Pick<Adapter, 'namespaceConstraints'>> =>
        adapter.namespaceConstraints !== undefined,
    );
  }

  private evaluate(
    adapter: Adapter,
    object: KubernetesObject,
    key = objectKey(object),
    produce: Adapter['toConstraints'] = adapter.toConstraints,
  ): void {
    let drafts: ConstraintDraft[];
    const lookedUp: KubernetesObject[] = [];
    try {
      drafts = produce(object, this.context(lookedUp));
    } catch (error) {
      // A malformed object must not keep stale constraints from its previous, valid version.
      this.index.removeObject(key);
      this.errors.record(key, {
        adapter: adapter.name,
        object: describeObject(object),
        message:
          error instanceof AdapterParseError ? error.message : `unexpected adapter failure: ${String(error)}`,
        at: this.clock().toISOString(),
      });
      return;
    }
    this.errors.clear(key);
    const observedAt = this.clock().toISOString();
    const related = relatedSources(object, lookedUp);
    // An adapter may name objects it did not look up (a binding's params), kept beside those it did.
    const constraints = drafts.map((draft) => {
      const all = [...related, ...(draft.relatedSources ?? [])];
      return {
        ...this.finish(draft, object, key, observedAt),
        ...(all.length > 0 ? { relatedSources: all } : {}),
      };
    });
    this.index.replaceObject(key, constraints, object);
  }

  private finish(
    draft: ConstraintDraft,
    object: KubernetesObject,
    key: string,
    observedAt: string,
  ): Constraint {
    const annotations = isStringRecord(object.metadata?.annotations) ? object.metadata.annotations : {};
    const contact = annotations[ANNOTATION_CONTACT] ?? this.settings.defaultContact;
    const severity = annotations[ANNOTATION_SEVERITY];
    const summary = annotations[ANNOTATION_SUMMARY];
    const namespaceOutcomes = draft.namespaceOutcomes?.map((outcome) => ({
      ...outcome,
      severity: isSeverity(severity) ? severity : outcome.severity,
      summary: summary ? [summary] : outcome.summary,
    }));
    return {
      ...draft,
      id: `${key}#${draft.id}`,
      // An admission rule on cluster-scoped resources only reaches no namespace (DESIGN.md 3).
      scope: scopeReachingTargets(draft.scope, draft.resourceTargets),
      severity: isSeverity(severity) ? severity : draft.severity,
      summary: summary ? [summary] : draft.summary,
      ...(namespaceOutcomes === undefined ? {} : { namespaceOutcomes }),
      remediation: {
        summary: draft.remediation.summary,
        steps: draft.remediation.steps.map((step) =>
          step.type === 'manual'
            ? { ...step, contact: annotations[ANNOTATION_CONTACT] ?? step.contact ?? contact }
            : step,
        ),
      },
      lastObserved: observedAt,
    };
  }
}
