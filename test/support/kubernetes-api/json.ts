// JSON values as they travel on the wire. The server keeps every object in this shape (never class
// instances), so what a test reads back is exactly what a client would have received.

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Turns anything a test hands over (client-node model instances with Date fields, literals) into
 * plain JSON, the same conversion a request body goes through.
 */
export function toJsonObject(value: unknown, what: string): JsonObject {
  const json: unknown = JSON.parse(JSON.stringify(value ?? null));
  if (!isJsonObject(json)) throw new TypeError(`${what} must be a JSON object`);
  return json;
}

export function cloneJson<T extends JsonValue>(value: T): T {
  return structuredClone(value);
}

export function stringField(object: JsonObject | undefined, key: string): string | undefined {
  const value = object?.[key];
  return typeof value === 'string' ? value : undefined;
}

export function objectField(object: JsonObject | undefined, key: string): JsonObject | undefined {
  const value = object?.[key];
  return isJsonObject(value) ? value : undefined;
}

/** String-to-string maps such as labels and annotations; anything else reads as empty. */
export function stringMapField(object: JsonObject | undefined, key: string): Record<string, string> {
  const map: Record<string, string> = {};
  for (const [name, value] of Object.entries(objectField(object, key) ?? {})) {
    if (typeof value === 'string') map[name] = value;
  }
  return map;
}

export function jsonEqual(left: JsonValue | undefined, right: JsonValue | undefined): boolean {
  if (left === right) return true;
  if (left === undefined || right === undefined || left === null || right === null) return false;
  if (Array.isArray(left) || Array.isArray(right)) {
    if (!Array.isArray(left) || !Array.isArray(right) || left.length !== right.length) return false;
    return left.every((entry, index) => jsonEqual(entry, right[index]));
  }
  if (isJsonObject(left) && isJsonObject(right)) {
    const leftKeys = Object.keys(left);
    if (leftKeys.length !== Object.keys(right).length) return false;
    return leftKeys.every((key) => key in right && jsonEqual(left[key], right[key]));
  }
  return false;
}
