import { randomUUID } from 'node:crypto';
import { alreadyExists, badRequest, conflict, notFound } from './api-status';
import { CRD_GROUP, CRD_PLURAL, NAMESPACE_PLURAL } from './builtin-resources';
import { resourceTypeFromCrd } from './custom-resource-definitions';
import { cloneJson, jsonEqual, objectField, stringField, type JsonObject, type JsonValue } from './json';
import { applyMergePatch, applyPatch } from './patches';
import { EventHistory, type ChangeType, type StoredEvent } from './event-history';
import { groupVersion, keyOf, type ResourceRegistry, type ResourceType } from './resource-registry';
import type { ObjectFilter } from './selectors';
import {
  applyKindRules,
  checkTypeMeta,
  kubernetesTimestamp,
  metadataOf,
  randomNameSuffix,
  validateName,
} from './write-rules';

// The etcd of the test server: objects by resource type, one global revision counter that every
// write advances (so resourceVersions are comparable across kinds, as with etcd), and a bounded
// history of change events from which watches replay (event-history.ts).

export type { ChangeType, StoredEvent } from './event-history';

export interface StoreObserver {
  objectChanged(event: StoredEvent): void;
  /** A CustomResourceDefinition went away: its watches end, as the real server closes them. */
  resourceTypeRemoved(type: ResourceType): void;
}

export interface StoreOptions {
  historyLimit: number;
  requireExistingNamespace: boolean;
}

export interface DeletePreconditions {
  uid?: string;
  resourceVersion?: string;
}

function objectKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

/** Everything but metadata and status: what `metadata.generation` counts changes of. */
function specPart(object: JsonObject): JsonObject {
  const { metadata: _metadata, status: _status, apiVersion: _apiVersion, kind: _kind, ...rest } = object;
  return rest;
}

export class ObjectStore {
  private revision = 1000;
  private readonly objects = new Map<string, Map<string, JsonObject>>();
  private readonly history: EventHistory;
  private readonly observers = new Set<StoreObserver>();

  constructor(
    readonly registry: ResourceRegistry,
    private readonly options: StoreOptions,
  ) {
    this.history = new EventHistory(options.historyLimit, this.revision);
  }

  get resourceVersion(): number {
    return this.revision;
  }

  observe(observer: StoreObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  setHistoryLimit(limit: number): void {
    this.history.setLimit(limit);
  }

  /** Forgets every past event, like an etcd compaction: only watches from now on can resume. */
  expireHistory(): void {
    this.history.expire(this.revision);
  }

  /** Events after `resourceVersion`, oldest first; 410 Expired when the window no longer has them. */
  eventsSince(resourceVersion: number): StoredEvent[] {
    return this.history.since(resourceVersion);
  }

  /** The compaction point of a continue token is checked against the same window. */
  assertNotCompacted(resourceVersion: number, message: string): void {
    this.history.assertNotCompacted(resourceVersion, message);
  }

  get(type: ResourceType, namespace: string | undefined, name: string): JsonObject | undefined {
    const stored = this.bucket(type).get(objectKey(type.namespaced ? namespace : undefined, name));
    return stored && cloneJson(stored);
  }

  require(type: ResourceType, namespace: string | undefined, name: string): JsonObject {
    const found = this.get(type, namespace, name);
    if (!found) throw notFound(type.group, type.plural, name);
    return found;
  }

  /** Matching objects in etcd key order (namespace, then name), as copies. */
  list(type: ResourceType, filter: ObjectFilter): JsonObject[] {
    return this.listStored(type, filter).map((object) => cloneJson(object));
  }

  /**
   * The same objects, not copied: the caller copies what it hands out. A paginated list copies its
   * page only; copying every object for every page made listing 50,000 Pods quadratic (issue 26).
   */
  listStored(type: ResourceType, filter: ObjectFilter): readonly JsonObject[] {
    return [...this.bucket(type).entries()]
      .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))
      .map(([, object]) => object)
      .filter((object) => filter.matches(object));
  }

  /**
   * POST. `namespace` comes from the path (or the object, for the programmatic API). `keepStatus`
   * lets the programmatic API seed an object together with its status, as if a controller had written
   * `/status` right after; over HTTP the main resource ignores status like the real server. On update,
   * `keepStatus` takes the body's status when it has one and keeps the current one otherwise.
   */
  create(
    type: ResourceType,
    version: string,
    input: JsonObject,
    namespace?: string,
    keepStatus = false,
  ): JsonObject {
    const object = cloneJson(input);
    checkTypeMeta(type, version, object);
    const metadata = metadataOf(object);
    const namespaceInBody = stringField(metadata, 'namespace');
    if (type.namespaced) {
      if (namespace !== undefined && namespaceInBody !== undefined && namespaceInBody !== namespace)
        throw badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      const effectiveNamespace = namespace ?? namespaceInBody ?? 'default';
      metadata.namespace = effectiveNamespace;
      this.checkNamespaceExists(effectiveNamespace);
    } else {
      delete metadata.namespace;
    }
    let name = stringField(metadata, 'name') ?? '';
    const generateName = stringField(metadata, 'generateName');
    if (name === '' && generateName) {
      do {
        name = generateName + randomNameSuffix();
      } while (this.bucket(type).has(objectKey(stringField(metadata, 'namespace'), name)));
    }
    metadata.name = name;
    validateName(type, name);
    if (this.bucket(type).has(objectKey(stringField(metadata, 'namespace'), name)))
      throw alreadyExists(type.group, type.plural, name);
    metadata.uid = randomUUID();
    metadata.creationTimestamp = kubernetesTimestamp();
    metadata.generation = 1;
    delete metadata.resourceVersion;
    delete metadata.deletionTimestamp;
    if (type.hasStatusSubresource && !keepStatus) delete object.status;
    applyKindRules(type, object, undefined);
    return this.commit(type, 'ADDED', object, undefined);
  }

  /** PUT of the object, or of its `/status` subresource (which changes nothing but `.status`). */
  update(
    type: ResourceType,
    version: string,
    namespace: string | undefined,
    name: string,
    input: JsonObject,
    target: 'object' | 'status' = 'object',
    keepStatus = false,
  ): JsonObject {
    const current = this.require(type, namespace, name);
    const body = cloneJson(input);
    checkTypeMeta(type, version, body);
    const metadata = metadataOf(body);
    const currentMetadata = metadataOf(current);
    const nameInBody = stringField(metadata, 'name');
    if (nameInBody !== undefined && nameInBody !== name)
      throw badRequest(`the name of the object (${nameInBody}) does not match the name on the URL (${name})`);
    const namespaceInBody = stringField(metadata, 'namespace');
    if (type.namespaced && namespaceInBody !== undefined && namespaceInBody !== namespace)
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    const expectedVersion = stringField(metadata, 'resourceVersion');
    if (
      expectedVersion !== undefined &&
      expectedVersion !== '' &&
      expectedVersion !== currentMetadata.resourceVersion
    )
      throw conflict(
        type.group,
        type.plural,
        name,
        'the object has been modified; please apply your changes to the latest version and try again',
      );
    const uid = stringField(metadata, 'uid');
    if (uid !== undefined && uid !== '' && uid !== currentMetadata.uid)
      throw conflict(
        type.group,
        type.plural,
        name,
        `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${String(currentMetadata.uid)}`,
      );

    let next: JsonObject;
    if (target === 'status') {
      next = cloneJson(current);
      if (body.status === undefined) delete next.status;
      else next.status = body.status;
    } else {
      next = body;
      const nextMetadata = metadataOf(next);
      for (const preserved of ['uid', 'creationTimestamp', 'generation', 'deletionTimestamp', 'namespace']) {
        const value = currentMetadata[preserved];
        if (value === undefined) delete nextMetadata[preserved];
        else nextMetadata[preserved] = value;
      }
      nextMetadata.name = name;
      if (type.hasStatusSubresource && !(keepStatus && body.status !== undefined)) {
        if (current.status === undefined) delete next.status;
        else next.status = current.status;
      }
      if (!jsonEqual(specPart(current), specPart(next)))
        nextMetadata.generation =
          (typeof currentMetadata.generation === 'number' ? currentMetadata.generation : 0) + 1;
    }
    next.apiVersion = current.apiVersion;
    next.kind = current.kind;
    metadataOf(next).resourceVersion = currentMetadata.resourceVersion;
    applyKindRules(type, next, current);
    // An update that changes nothing is not written: no new resourceVersion, no watch event.
    if (jsonEqual(next, current)) return current;
    next.apiVersion = groupVersion(type.group, version);
    return this.commit(type, 'MODIFIED', next, current);
  }

  /** PATCH: the patched object then goes through the same checks as a PUT. */
  patch(
    type: ResourceType,
    version: string,
    namespace: string | undefined,
    name: string,
    contentType: string,
    patch: JsonValue,
    target: 'object' | 'status' = 'object',
  ): JsonObject {
    const current = this.require(type, namespace, name);
    const patched = applyPatch(current, contentType, patch);
    // Without a resourceVersion in the patch the write is unconditional, as on the real server.
    if (jsonEqual(objectField(patched, 'metadata')?.resourceVersion, metadataOf(current).resourceVersion))
      delete metadataOf(patched).resourceVersion;
    patched.apiVersion = groupVersion(type.group, version);
    return this.update(type, version, namespace, name, patched, target);
  }

  /** The programmatic `/status` merge patch. */
  mergeStatus(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    statusPatch: JsonObject,
  ): JsonObject {
    const current = this.require(type, namespace, name);
    const version = type.versions[0];
    const next: JsonObject = { ...current, apiVersion: groupVersion(type.group, version) };
    next.status = applyMergePatch(current.status, statusPatch);
    delete metadataOf(next).resourceVersion;
    return this.update(type, version, namespace, name, next, 'status');
  }

  delete(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    preconditions: DeletePreconditions = {},
  ): JsonObject {
    const current = this.require(type, namespace, name);
    const metadata = metadataOf(current);
    if (preconditions.uid !== undefined && preconditions.uid !== metadata.uid)
      throw conflict(
        type.group,
        type.plural,
        name,
        `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${String(metadata.uid)}`,
      );
    if (
      preconditions.resourceVersion !== undefined &&
      preconditions.resourceVersion !== metadata.resourceVersion
    )
      throw conflict(
        type.group,
        type.plural,
        name,
        `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ` +
          `ResourceVersion in object meta: ${String(metadata.resourceVersion)}`,
      );
    if (type.group === '' && type.plural === NAMESPACE_PLURAL) this.deleteNamespaceContents(name);
    if (type.group === CRD_GROUP && type.plural === CRD_PLURAL) this.removeDefinedType(current);
    return this.commit(type, 'DELETED', current, current);
  }

  deleteCollection(type: ResourceType, filter: ObjectFilter): JsonObject[] {
    return this.list(type, filter).map((object) => {
      const metadata = metadataOf(object);
      return this.delete(type, stringField(metadata, 'namespace'), stringField(metadata, 'name') ?? '');
    });
  }

  private bucket(type: ResourceType): Map<string, JsonObject> {
    const key = keyOf(type);
    let bucket = this.objects.get(key);
    if (!bucket) {
      bucket = new Map();
      this.objects.set(key, bucket);
    }
    return bucket;
  }

  private commit(
    type: ResourceType,
    change: ChangeType,
    object: JsonObject,
    previous: JsonObject | undefined,
  ) {
    this.revision += 1;
    const stored = cloneJson(object);
    const metadata = metadataOf(stored);
    metadata.resourceVersion = String(this.revision);
    const key = objectKey(stringField(metadata, 'namespace'), stringField(metadata, 'name') ?? '');
    if (change === 'DELETED') this.bucket(type).delete(key);
    else this.bucket(type).set(key, stored);
    const event: StoredEvent = {
      type: change,
      resourceKey: keyOf(type),
      object: stored,
      previous,
      resourceVersion: this.revision,
    };
    this.history.record(event);
    if (type.group === CRD_GROUP && type.plural === CRD_PLURAL && change !== 'DELETED') {
      const defined = resourceTypeFromCrd(stored);
      const existing = defined && this.registry.byKey(keyOf(defined));
      if (defined && !existing?.builtIn) this.registry.register(defined);
      else if (!defined && existing && !existing.builtIn)
        this.registry.unregister(existing.group, existing.plural);
    }
    for (const observer of this.observers) observer.objectChanged(event);
    return cloneJson(stored);
  }

  /** The namespace controller's job, done at once: nothing outlives its namespace. */
  private deleteNamespaceContents(namespace: string): void {
    for (const type of this.registry.all()) {
      if (!type.namespaced) continue;
      for (const [key, object] of [...this.bucket(type).entries()]) {
        if (key.startsWith(`${namespace}/`)) this.commit(type, 'DELETED', object, object);
      }
    }
  }

  /** The CRD finalizer's job: delete every custom object, stop serving the type, end its watches. */
  private removeDefinedType(crd: JsonObject): void {
    const spec = objectField(crd, 'spec');
    const group = stringField(spec, 'group') ?? '';
    const plural = stringField(objectField(spec, 'names'), 'plural') ?? '';
    const type = this.registry.byKey(`${group}/${plural}`);
    if (!type || type.builtIn) return;
    for (const object of [...this.bucket(type).values()]) this.commit(type, 'DELETED', object, object);
    this.objects.delete(keyOf(type));
    this.registry.unregister(group, plural);
    for (const observer of this.observers) observer.resourceTypeRemoved(type);
  }

  private checkNamespaceExists(namespace: string): void {
    if (!this.options.requireExistingNamespace) return;
    const namespaces = this.registry.byKey(`/${NAMESPACE_PLURAL}`);
    if (namespaces && !this.bucket(namespaces).has(objectKey(undefined, namespace)))
      throw notFound('', NAMESPACE_PLURAL, namespace);
  }
}
