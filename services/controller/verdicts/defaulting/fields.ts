import { isRecord } from '../../../model/kubernetes';
import { defineField } from '../../../model/object-copy';

// How the API server's defaulting functions test for "unset", over JSON. Go structs cannot tell an
// absent string from "" or an absent non-pointer int from 0, so those defaults also replace "" and 0;
// a pointer field is unset only when absent or null. A field of the wrong type is left alone: the
// server rejects such an object when it decodes it, before any default.

export type JsonRecord = Record<string, unknown>;

// Every write of a default goes through `setField` or `removeField`, so the same defaulting code can
// run as a probe over the caller's object: the webhook forwards objects the API server has already
// defaulted, and for those a probe that meets no write spares the copy (a deep copy of every review
// the controller checks, issue 33). While probing, the first write ends the walk by a throw; the
// probe is synchronous and restores the flag in `finally`, so no other caller can observe it.

/** Thrown at the first write while probing; made once, so a probe does not capture a stack. */
const DEFAULT_WOULD_BE_WRITTEN = new Error('a server default would be written');
let probing = false;

/** Sets `field` to a default (a key `__proto__` stays an own field, as the server decodes it). */
export function setField(record: JsonRecord, field: string, value: unknown): void {
  if (probing) throw DEFAULT_WOULD_BE_WRITTEN;
  defineField(record, field, value);
}

/** Removes a field the server clears while defaulting. */
export function removeField(record: JsonRecord, field: string): void {
  if (!Object.hasOwn(record, field)) return;
  if (probing) throw DEFAULT_WOULD_BE_WRITTEN;
  delete record[field];
}

/**
 * Whether `defaulting` would write anything into `object`, found without writing: true at its first
 * write. An object the API server defaulted already needs no copy.
 */
export function wouldWriteDefaults(defaulting: (object: JsonRecord) => void, object: JsonRecord): boolean {
  probing = true;
  try {
    defaulting(object);
    return false;
  } catch (error) {
    if (error === DEFAULT_WOULD_BE_WRITTEN) return true;
    throw error;
  } finally {
    probing = false;
  }
}

/** A string field (`imagePullPolicy`): absent or "". */
export function defaultString(record: JsonRecord, field: string, value: string): void {
  const current = record[field];
  if (current === undefined || current === null || current === '') setField(record, field, value);
}

/** A non-pointer integer (`timeoutSeconds`): absent or 0. */
export function defaultInteger(record: JsonRecord, field: string, value: number): void {
  const current = record[field];
  if (current === undefined || current === null || current === 0) setField(record, field, value);
}

/** A pointer field (`replicas`, `enableServiceLinks`, `securityContext`): absent or null. */
export function defaultPointer(record: JsonRecord, field: string, value: unknown): void {
  const current = record[field];
  if (current === undefined || current === null) setField(record, field, value);
}

/** The record at `field`, when there is one (a struct pointer that is set). */
export function recordAt(record: JsonRecord, field: string): JsonRecord | undefined {
  const value = record[field];
  return isRecord(value) ? value : undefined;
}

/** The record at `field`, created empty when absent (a Go struct that is not a pointer). */
export function structAt(record: JsonRecord, field: string): JsonRecord | undefined {
  const value = record[field];
  if (value === undefined || value === null) {
    const created: JsonRecord = {};
    setField(record, field, created);
    return created;
  }
  return isRecord(value) ? value : undefined;
}

/** The records of a list field (containers, volumes, ports), skipping anything else. */
export function recordsAt(record: JsonRecord, field: string): JsonRecord[] {
  const value = record[field];
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/**
 * A deep copy of decoded JSON (plain objects, arrays, scalars): cheaper than structuredClone.
 * `checkpoint` runs at every object and list, so an evaluation guard can stop a huge copy. A key
 * `__proto__` stays an own field, as the API server decodes it (defineField).
 */
export function copyJson<T>(value: T, checkpoint: () => void = () => undefined): T {
  if (typeof value !== 'object' || value === null) return value;
  checkpoint();
  // Index loops rather than `map`: no closure per list, on every admission check's copy.
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (let position = 0; position < value.length; position++)
      items.push(copyJson(value[position] as unknown, checkpoint));
    return items as T;
  }
  const record = value as JsonRecord;
  const copy: JsonRecord = {};
  const keys = Object.keys(record);
  for (let position = 0; position < keys.length; position++) {
    const key = keys[position];
    defineField(copy, key, copyJson(record[key], checkpoint));
  }
  return copy as T;
}
