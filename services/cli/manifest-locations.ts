import { isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type Node } from 'yaml';

// Where an object of a checked manifest, and a field of it, are in the file: the line numbers the
// CI formats (SARIF, GitHub annotations) point at. The checked objects come from the manifest
// reader in the order they appear (a `List`'s items in place), so the n-th object here is the n-th
// object of the check; kind and name are compared to be sure, and a mismatch falls back to a search
// by kind and name, then to the file's first line, never to a wrong object.

/** The object of a check a location is asked for. */
export interface LocatedObject {
  kind: string;
  name: string;
}

export interface ManifestLocations {
  /**
   * The line (1-based) of the `position`-th object of the file, or of the deepest part of
   * `fieldPath` (`spec.template.spec.containers[1].resources.limits`) that the object has.
   */
  lineOf(object: LocatedObject, position: number, fieldPath?: string): number;
}

interface ObjectNode {
  kind: unknown;
  name: unknown;
  node: Node;
}

/** `a.b[1]["c.d"]` into `['a', 'b', 1, 'c.d']`. */
export function fieldPathSegments(fieldPath: string): Array<string | number> {
  const segments: Array<string | number> = [];
  const pattern = /\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]|\['([^']*)'\]|([^.[\]]+)/g;
  for (const match of fieldPath.matchAll(pattern)) {
    if (match[1] !== undefined) segments.push(Number(match[1]));
    else if (match[2] !== undefined) segments.push(match[2].replace(/\\(.)/g, '$1'));
    else if (match[3] !== undefined) segments.push(match[3]);
    else if (match[4] !== undefined) segments.push(match[4]);
  }
  return segments;
}

function scalarValue(node: unknown): unknown {
  return isScalar(node) ? node.value : undefined;
}

function entry(map: Node, key: string): { key: Node | null; value: Node | null } | undefined {
  if (!isMap(map)) return undefined;
  const pair = map.items.find((item) => scalarValue(item.key) === key);
  return pair ? { key: pair.key as Node | null, value: pair.value as Node | null } : undefined;
}

/** The objects of one document: itself, or the items of a `List`. */
function objectsOf(node: Node | null): ObjectNode[] {
  if (!isMap(node)) return [];
  const kind = scalarValue(entry(node, 'kind')?.value);
  const items = entry(node, 'items')?.value;
  if (typeof kind === 'string' && kind.endsWith('List') && isSeq(items))
    return items.items.flatMap((item) => objectsOf(item as Node | null));
  const metadata = entry(node, 'metadata')?.value ?? null;
  return [{ kind, name: scalarValue(entry(metadata as Node, 'name')?.value), node }];
}

export function manifestLocations(content: string): ManifestLocations {
  const lines = new LineCounter();
  const objects: ObjectNode[] = [];
  try {
    for (const document of parseAllDocuments(content, { lineCounter: lines, uniqueKeys: false })) {
      if (document.errors.length > 0) continue;
      objects.push(...objectsOf(document.contents as Node | null));
    }
  } catch {
    // A text only the lenient reader accepted: every finding points at the first line.
  }
  const lineAt = (node: Node | null | undefined) =>
    node?.range ? lines.linePos(node.range[0]).line : undefined;

  const find = (object: LocatedObject, position: number): ObjectNode | undefined => {
    const same = (candidate: ObjectNode | undefined) =>
      candidate !== undefined && candidate.kind === object.kind && candidate.name === object.name;
    const atPosition = objects[position];
    return same(atPosition) ? atPosition : objects.find(same);
  };

  return {
    lineOf(object, position, fieldPath) {
      const found = find(object, position);
      if (!found) return 1;
      let line = lineAt(found.node) ?? 1;
      let node: Node | null = found.node;
      for (const segment of fieldPath ? fieldPathSegments(fieldPath) : []) {
        if (typeof segment === 'number' && isSeq(node)) {
          const item = node.items[segment] as Node | null | undefined;
          if (item === undefined) break;
          node = item;
          line = lineAt(item) ?? line;
          continue;
        }
        const pair = entry(node as Node, String(segment));
        if (!pair) break;
        line = lineAt(pair.key) ?? line;
        node = pair.value;
      }
      return line;
    },
  };
}
