import { objectField, stringField, type JsonObject } from './json';

// The typed face of stored objects for tests: what the programmatic API accepts and returns.

/** An object as the store holds it, typed for tests. */
export interface ApiObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid: string;
    resourceVersion: string;
    generation?: number;
    creationTimestamp: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

/**
 * What tests hand to `create`/`update`: objects in wire form (as JSON.stringify renders them). Plain
 * literals and most client-node models qualify; models whose TypeScript names differ from the wire
 * (`x_kubernetes_preserve_unknown_fields`, `_continue`, `_ref`) must be written in wire form, since
 * only client-node's own serializer renames them.
 */
export interface ObjectInput {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
}

export function toApiObject(json: JsonObject): ApiObject {
  const metadata = objectField(json, 'metadata') ?? {};
  return {
    ...json,
    apiVersion: stringField(json, 'apiVersion') ?? '',
    kind: stringField(json, 'kind') ?? '',
    metadata: {
      ...metadata,
      name: stringField(metadata, 'name') ?? '',
      uid: stringField(metadata, 'uid') ?? '',
      resourceVersion: stringField(metadata, 'resourceVersion') ?? '',
      creationTimestamp: stringField(metadata, 'creationTimestamp') ?? '',
    },
  };
}
