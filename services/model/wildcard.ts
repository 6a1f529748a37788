// Kyverno's wildcards (`*` any run of characters, `?` exactly one), matched without a regular
// expression. Policies write them in image patterns (`registry.corp.example/*`), names and label
// values; the text they are matched against is the caller's. A wildcard turned into `^.*x.*y$` makes
// V8's backtracking engine quadratic (issue 27: an image of `.dkr.ecr.` × 20,000 took 4.6 s).
//
// `*` is the only variable-length element, so the leftmost-first greedy match is exact: the part
// before the first `*` must be a prefix, the part after the last a suffix, and each part between is
// taken at its earliest occurrence after the previous one (an earlier occurrence never leaves less
// room for what follows). Every character of the text is compared against at most one part at a
// time, so the work is at most (text length) × (longest part), linear in the caller's text for any
// one pattern. `?` matches one UTF-16 unit, as the regular expressions it replaces did.

/** Whether `text` matches `pattern` in full. */
export function matchesWildcard(pattern: string, text: string): boolean {
  // The commonest pattern (Kyverno's kind selectors default their group and version to it).
  if (pattern === '*') return true;
  if (!pattern.includes('*')) return pattern.length === text.length && partMatchesAt(pattern, text, 0);
  const parts = pattern.split('*');
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (first.length + last.length > text.length) return false;
  if (!partMatchesAt(first, text, 0)) return false;
  if (!partMatchesAt(last, text, text.length - last.length)) return false;
  let position = first.length;
  const end = text.length - last.length;
  for (let index = 1; index < parts.length - 1; index++) {
    const part = parts[index];
    if (part.length === 0) continue;
    const found = findPart(part, text, position, end);
    if (found === -1) return false;
    position = found + part.length;
  }
  return true;
}

/** Whether `part` (literals and `?`) matches `text` at `start`. */
function partMatchesAt(part: string, text: string, start: number): boolean {
  for (let index = 0; index < part.length; index++) {
    const expected = part[index];
    if (expected !== '?' && expected !== text[start + index]) return false;
  }
  return true;
}

/** The earliest position at or after `from` where `part` matches and ends by `end`; -1 if none. */
function findPart(part: string, text: string, from: number, end: number): number {
  if (!part.includes('?')) {
    // String.prototype.indexOf: V8 searches without backtracking blow-up (Boyer-Moore-Horspool).
    const found = text.indexOf(part, from);
    return found !== -1 && found + part.length <= end ? found : -1;
  }
  for (let start = from; start + part.length <= end; start++)
    if (partMatchesAt(part, text, start)) return start;
  return -1;
}
