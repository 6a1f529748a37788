import { ApiStatusError, badRequest } from './api-status';
import { cloneJson, isJsonObject, jsonEqual, type JsonObject, type JsonValue } from './json';

// The patch formats a client can send. Strategic merge patch is applied as a JSON merge patch: the
// two agree on maps and scalars, but strategic merge merges some lists by key (containers by name)
// where this server replaces them whole; tests that patch such lists must send the whole list.

export const PATCH_CONTENT_TYPES = {
  jsonPatch: 'application/json-patch+json',
  mergePatch: 'application/merge-patch+json',
  strategicMergePatch: 'application/strategic-merge-patch+json',
  applyPatch: 'application/apply-patch+yaml',
} as const;

/** RFC 7386: objects merge recursively, `null` deletes, anything else replaces. */
export function applyMergePatch(target: JsonValue | undefined, patch: JsonValue): JsonValue {
  if (!isJsonObject(patch)) return cloneJson(patch);
  const result: JsonObject = isJsonObject(target) ? cloneJson(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

/** RFC 6901: `/metadata/labels/app.kubernetes.io~1name` → ['metadata', 'labels', 'app.kubernetes.io/name']. */
function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw badRequest(`invalid JSON pointer "${pointer}"`);
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}

// The real server reports a patch that cannot be applied to the object as 422.
function cannotApply(message: string): ApiStatusError {
  return new ApiStatusError(
    422,
    `the server rejected our request due to an error in our request: ${message}`,
  );
}

function arrayIndex(container: JsonValue[], segment: string, forInsert: boolean): number {
  if (forInsert && segment === '-') return container.length;
  if (!/^(0|[1-9]\d*)$/.test(segment)) throw cannotApply(`invalid array index "${segment}"`);
  const index = Number(segment);
  if (index > container.length || (!forInsert && index === container.length))
    throw cannotApply(`array index ${index} out of bounds`);
  return index;
}

function parentOf(document: JsonValue, path: string[]): JsonValue {
  let current = document;
  for (const segment of path.slice(0, -1)) {
    const child: JsonValue | undefined = Array.isArray(current)
      ? current[arrayIndex(current, segment, false)]
      : isJsonObject(current)
        ? current[segment]
        : undefined;
    if (child === undefined) throw cannotApply(`path /${path.join('/')} does not exist`);
    current = child;
  }
  return current;
}

function getAt(document: JsonValue, path: string[]): JsonValue {
  if (path.length === 0) return document;
  const parent = parentOf(document, path);
  const last = path[path.length - 1];
  const value = Array.isArray(parent)
    ? parent[arrayIndex(parent, last, false)]
    : isJsonObject(parent)
      ? parent[last]
      : undefined;
  if (value === undefined) throw cannotApply(`path /${path.join('/')} does not exist`);
  return value;
}

function addAt(document: JsonValue, path: string[], value: JsonValue): JsonValue {
  if (path.length === 0) return value;
  const parent = parentOf(document, path);
  const last = path[path.length - 1];
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, true), 0, value);
  else if (isJsonObject(parent)) parent[last] = value;
  else throw cannotApply(`cannot add below a scalar at /${path.join('/')}`);
  return document;
}

function removeAt(document: JsonValue, path: string[]): JsonValue {
  if (path.length === 0) throw cannotApply('cannot remove the whole document');
  const parent = parentOf(document, path);
  const last = path[path.length - 1];
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, false), 1);
  else if (isJsonObject(parent) && last in parent) delete parent[last];
  else throw cannotApply(`path /${path.join('/')} does not exist`);
  return document;
}

/** RFC 6902 with all six operations; the document is copied, never changed in place. */
export function applyJsonPatch(target: JsonObject, patch: JsonValue): JsonValue {
  if (!Array.isArray(patch)) throw badRequest('a JSON patch must be an array of operations');
  let document: JsonValue = cloneJson(target);
  for (const operation of patch) {
    if (!isJsonObject(operation) || typeof operation.op !== 'string' || typeof operation.path !== 'string')
      throw badRequest('every JSON patch operation needs a string "op" and "path"');
    const path = parsePointer(operation.path);
    const from = typeof operation.from === 'string' ? parsePointer(operation.from) : undefined;
    const value = operation.value;
    switch (operation.op) {
      case 'add':
        if (value === undefined) throw badRequest('"add" needs a value');
        document = addAt(document, path, cloneJson(value));
        break;
      case 'remove':
        document = removeAt(document, path);
        break;
      case 'replace':
        if (value === undefined) throw badRequest('"replace" needs a value');
        getAt(document, path);
        document = addAt(removeAt(document, path), path, cloneJson(value));
        break;
      case 'move': {
        if (!from) throw badRequest('"move" needs "from"');
        const moved = getAt(document, from);
        document = addAt(removeAt(document, from), path, moved);
        break;
      }
      case 'copy':
        if (!from) throw badRequest('"copy" needs "from"');
        document = addAt(document, path, cloneJson(getAt(document, from)));
        break;
      case 'test':
        if (!jsonEqual(getAt(document, path), value)) throw cannotApply(`test failed at ${operation.path}`);
        break;
      default:
        throw badRequest(`unknown JSON patch operation "${operation.op}"`);
    }
  }
  return document;
}

/** Applies a PATCH body of `contentType` to `target`; the result still has to be validated. */
export function applyPatch(target: JsonObject, contentType: string, patch: JsonValue): JsonObject {
  let result: JsonValue;
  switch (contentType) {
    case PATCH_CONTENT_TYPES.jsonPatch:
      result = applyJsonPatch(target, patch);
      break;
    case PATCH_CONTENT_TYPES.mergePatch:
    case PATCH_CONTENT_TYPES.strategicMergePatch:
      if (!isJsonObject(patch)) throw badRequest('a merge patch must be a JSON object');
      result = applyMergePatch(target, patch);
      break;
    default:
      throw new ApiStatusError(
        415,
        `the body of the request was in an unknown format - accepted media types include: ` +
          `${PATCH_CONTENT_TYPES.jsonPatch}, ${PATCH_CONTENT_TYPES.mergePatch}, ${PATCH_CONTENT_TYPES.strategicMergePatch}`,
      );
  }
  if (!isJsonObject(result)) throw cannotApply('the patched object is not a JSON object');
  return result;
}
