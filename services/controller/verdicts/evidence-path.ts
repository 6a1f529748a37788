import { isRecord } from '../../model/kubernetes';

// Evidence paths are written by the engines, and some are built from the policy rather than from the
// object: a ValidatingAdmissionPolicy's evidence names the first field its CEL reads
// (`spec.template.spec.secretFieldName`), which the object need not have. Where the viewer may not
// see the policy, such a path would tell them what the hidden policy reads, so the path is cut back
// to the longest prefix the admitted object itself has: the viewer learns only the names of fields
// they wrote. Paths are the engines' spelling: `.`-separated keys (a key may itself contain dots,
// as label keys do) and `[n]` list indexes; `["key"]` is read too.

const LIST_INDEX = /^\[(\d+)\]/;
const QUOTED_KEY = /^\[(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')\]/;

/** The key of `record` that `rest` starts with, longest first, ending where a segment ends. */
function keyAtStart(record: Record<string, unknown>, rest: string): string | undefined {
  let found: string | undefined;
  for (const key of Object.keys(record)) {
    if (key === '' || !rest.startsWith(key)) continue;
    const next = rest.charAt(key.length);
    if (next !== '' && next !== '.' && next !== '[') continue;
    if (found === undefined || key.length > found.length) found = key;
  }
  return found;
}

/** One step of the path from `position` into `current`: where it ends and the value there. */
function step(current: unknown, path: string, position: number): { end: number; value: unknown } | undefined {
  const rest = path.slice(position);
  const index = LIST_INDEX.exec(rest);
  if (index) {
    const at = Number(index[1]);
    return Array.isArray(current) && at < current.length
      ? { end: position + index[0].length, value: current[at] }
      : undefined;
  }
  if (!isRecord(current)) return undefined;
  const quoted = QUOTED_KEY.exec(rest);
  if (quoted) {
    const key = (quoted[1] ?? quoted[2] ?? '').replace(/\\(.)/g, '$1');
    return Object.hasOwn(current, key)
      ? { end: position + quoted[0].length, value: current[key] }
      : undefined;
  }
  const key = keyAtStart(current, rest);
  return key === undefined ? undefined : { end: position + key.length, value: current[key] };
}

/**
 * The longest prefix of `path` that names fields `object` has ('' when not even the first one);
 * `path` itself when the object has it all.
 */
export function pathWithinObject(object: unknown, path: string): string {
  let current = object;
  let position = 0;
  let kept = 0;
  while (position < path.length) {
    // A `.` separates a key from what came before; `[` needs no separator.
    if (position > 0 && path.charAt(position) === '.') position++;
    else if (position > 0 && path.charAt(position) !== '[') break;
    const taken = step(current, path, position);
    if (!taken) break;
    current = taken.value;
    position = taken.end;
    kept = position;
  }
  return path.slice(0, kept);
}
