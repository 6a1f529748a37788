import { AdapterParseError, type SourceObject } from '../../../model/constraint';
import { isRecord, type KubernetesObject, type LabelSelector } from '../../../model/kubernetes';
import { LabelSelectorError, parseLabelSelector } from '../../../model/label-selector';

// Defensive readers for untyped Kubernetes objects. Each throws AdapterParseError naming the field,
// so a malformed object becomes one counted parse error with a message an operator can act on.

/** A string field or the fallback: a malformed field must not make the error message itself throw. */
function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' && value !== '' ? value : fallback;
}

export function describeObject(object: KubernetesObject): string {
  const namespace = stringOr(object.metadata?.namespace, '');
  return `${stringOr(object.kind, 'object')} ${namespace ? `${namespace}/` : ''}${stringOr(object.metadata?.name, '(unnamed)')}`;
}

export function requireName(object: KubernetesObject): string {
  const name = object.metadata?.name;
  if (typeof name !== 'string' || name === '')
    throw new AdapterParseError(`${stringOr(object.kind, 'object')} has no metadata.name`);
  return name;
}

export function requireNamespace(object: KubernetesObject): string {
  const namespace = object.metadata?.namespace;
  if (typeof namespace !== 'string' || namespace === '')
    throw new AdapterParseError(`${describeObject(object)} has no metadata.namespace`);
  return namespace;
}

export function sourceOf(object: KubernetesObject, namespaced: boolean): SourceObject {
  return namespaced ? namespacedSourceOf(object) : { ...identityOf(object), namespace: null };
}

/** The source of a namespaced object, typed so that its namespace is known to be set. */
export function namespacedSourceOf(object: KubernetesObject): SourceObject & { namespace: string } {
  return { ...identityOf(object), namespace: requireNamespace(object) };
}

function identityOf(object: KubernetesObject): Omit<SourceObject, 'namespace'> {
  return { kind: object.kind ?? '', apiVersion: object.apiVersion ?? '', name: requireName(object) };
}

/** A field that must be an object when present; returns {} when absent. */
export function readRecord(value: unknown, where: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw new AdapterParseError(`${where} must be an object`);
  return value;
}

/** A field that must be a list when present; returns [] when absent. */
export function readList(value: unknown, where: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new AdapterParseError(`${where} must be a list`);
  return value;
}

export function readRecordList(value: unknown, where: string): Array<Record<string, unknown>> {
  return readList(value, where).map((entry, index) => {
    if (!isRecord(entry)) throw new AdapterParseError(`${where}[${index}] must be an object`);
    return entry;
  });
}

export function readStringList(value: unknown, where: string): string[] {
  return readList(value, where).map((entry, index) => {
    if (typeof entry !== 'string') throw new AdapterParseError(`${where}[${index}] must be a string`);
    return entry;
  });
}

export function readOptionalString(value: unknown, where: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new AdapterParseError(`${where} must be a string`);
  return value;
}

export function readSelector(value: unknown, where: string): LabelSelector {
  try {
    return parseLabelSelector(value, where);
  } catch (error) {
    if (error instanceof LabelSelectorError) throw new AdapterParseError(error.message);
    throw error;
  }
}

/** A selector that may be left out: undefined then, where readSelector would return the empty selector. */
export function readOptionalSelector(value: unknown, where: string): LabelSelector | undefined {
  return value === undefined || value === null ? undefined : readSelector(value, where);
}

/** The spec of an object, which every policy kind needs. */
export function requireSpec(object: KubernetesObject): Record<string, unknown> {
  if (!isRecord(object.spec)) throw new AdapterParseError(`${describeObject(object)} has no spec object`);
  return object.spec;
}
