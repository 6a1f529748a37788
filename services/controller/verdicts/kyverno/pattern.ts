import { isRecord } from '../../../model/kubernetes';
import { defineField } from '../../../model/object-copy';
import { scalarMatches, wildcardMatches } from './scalar-pattern';

// Kyverno's `validate.pattern` over a resource, as Kyverno 1.19 evaluates it
// (pkg/engine/validate/validate.go and pkg/engine/anchor; https://kyverno.io/docs/writing-policies/validate/):
// maps match key by key, a list pattern's map element applies to every element of the list, and the
// anchors on keys: `(k)` conditional, `=(k)` equality (only if present), `^(k)` existence (some
// element of the list matches), `X(k)` negation (must be absent), `<(k)` global. `+(k)` belongs to
// mutation. What Kyverno does and a simpler reading would not:
// - a conditional anchor that does not hold skips the map it is in, and that skip travels up: through
//   plain keys to the whole rule (a Service that is not a LoadBalancer skips the rule), and through a
//   list only when every element was skipped;
// - in a list, elements whose conditions do not hold are skipped, the others must match;
// - wildcard keys under `metadata.labels` / `metadata.annotations` stand for the object's matching key
//   (Kyverno picks one; when several match and they disagree, the outcome is Kyverno's random pick,
//   which is reported as ambiguous).

export type PatternResult =
  | { kind: 'pass' }
  /** A conditional or global anchor was not met: Kyverno skips the rule for this resource. */
  | { kind: 'skip' }
  | { kind: 'fail'; path: string; value: unknown; pattern: unknown }
  /** Kyverno reports an error rather than pass or fail (a failure where an anchored key is missing). */
  | { kind: 'error'; message: string };

/** Kyverno's outcome depends on which of several matching metadata keys it happens to pick. */
export class AmbiguousPattern extends Error {}

const PASS: PatternResult = { kind: 'pass' };

type Anchor = 'condition' | 'equality' | 'existence' | 'negation' | 'global' | 'add' | 'none';

const ANCHOR = /^([+<=X^])?\((.+)\)$/;
const MODIFIERS: Record<string, Anchor> = {
  '': 'condition',
  '=': 'equality',
  '^': 'existence',
  X: 'negation',
  '<': 'global',
  '+': 'add',
};

interface ParsedKey {
  anchor: Anchor;
  name: string;
  modifier: string;
}

// Pattern keys come from policies: a bounded set, parsed once.
const parsedKeys = new Map<string, ParsedKey>();
const PARSED_KEYS_LIMIT = 10_000;

export function parseKey(key: string): ParsedKey {
  const cached = parsedKeys.get(key);
  if (cached) return cached;
  const match = ANCHOR.exec(key.trim());
  const modifier = match?.[1] ?? '';
  const parsed: ParsedKey = match
    ? { anchor: MODIFIERS[modifier], name: match[2], modifier }
    : { anchor: 'none', name: key, modifier: '' };
  if (parsedKeys.size >= PARSED_KEYS_LIMIT) parsedKeys.clear();
  parsedKeys.set(key, parsed);
  return parsed;
}

interface PreparedMap {
  /** Conditional, existence, equality and negation anchors, sorted by key (Kyverno's phase 1). */
  anchors: Array<[string, unknown]>;
  /** The other keys in Kyverno's order: global anchors and keys holding anchors first (phase 2). */
  others: Array<[string, unknown]>;
}

// A pattern map's keys are split and ordered once per pattern object (policies are immutable in the
// index; a pattern with variables is a new object per evaluation and is prepared each time).
const preparedMaps = new WeakMap<Record<string, unknown>, PreparedMap>();

function prepare(pattern: Record<string, unknown>): PreparedMap {
  const cached = preparedMaps.get(pattern);
  if (cached) return cached;
  const anchors: Array<[string, unknown]> = [];
  const others: Array<[string, unknown]> = [];
  for (const entry of Object.entries(pattern)) {
    const { anchor } = parseKey(entry[0]);
    if (anchor === 'condition' || anchor === 'existence' || anchor === 'equality' || anchor === 'negation')
      anchors.push(entry);
    else others.push(entry);
  }
  anchors.sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
  const prepared = { anchors, others: orderResourceKeys(others) };
  preparedMaps.set(pattern, prepared);
  return prepared;
}

/**
 * A mismatch on the way up: `condition` and `global` come straight from an anchor at this level,
 * `nested-skip` from a map or list all of whose parts were skipped (Kyverno's PatternError with
 * Skip), `negation` from an X() anchor, `fail` from anything else.
 */
type Failure = { kind: 'negation' | 'fail'; path: string; value: unknown; pattern: unknown };
type Mismatch = { kind: 'condition' | 'global' | 'nested-skip' } | Failure;

const isSkip = (mismatch: Mismatch): boolean =>
  mismatch.kind === 'condition' || mismatch.kind === 'global' || mismatch.kind === 'nested-skip';

function child(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}

class Matcher {
  /** Anchor keys (conditional, existence, negation) and whether any resource map visited had them. */
  readonly anchorsSeen = new Map<string, boolean>();

  constructor(private readonly checkpoint: () => void) {}

  element(value: unknown, pattern: unknown, path: string): Mismatch | undefined {
    this.checkpoint();
    if (isRecord(pattern)) {
      if (!isRecord(value)) return { kind: 'fail', path, value, pattern };
      this.noteAnchors(pattern, value);
      return this.map(value, pattern, path);
    }
    if (Array.isArray(pattern)) {
      if (!Array.isArray(value)) return { kind: 'fail', path, value, pattern };
      return this.list(value, pattern, path);
    }
    if (Array.isArray(value)) {
      for (const item of value) {
        this.checkpoint();
        if (!scalarMatches(pattern, item)) return { kind: 'fail', path, value, pattern };
      }
      return undefined;
    }
    return scalarMatches(pattern, value) ? undefined : { kind: 'fail', path, value, pattern };
  }

  private noteAnchors(pattern: Record<string, unknown>, value: Record<string, unknown>): void {
    for (const key of Object.keys(pattern)) {
      const { anchor, name } = parseKey(key);
      if (anchor !== 'condition' && anchor !== 'existence' && anchor !== 'negation') continue;
      if (this.anchorsSeen.get(key) === true) continue;
      this.anchorsSeen.set(key, name in value);
    }
  }

  private map(value: Record<string, unknown>, rawPattern: Record<string, unknown>, path: string) {
    const { anchors, others } = prepare(expandMetadataWildcards(rawPattern, value));
    const skips: Mismatch[] = [];
    let applied = 0;
    // Kyverno stops at a failure only while no conditional anchor of this map has failed directly.
    const directSkip = () => skips.some((skip) => skip.kind !== 'nested-skip');
    for (const [key, sub] of anchors) {
      const mismatch = this.handle(key, sub, value, path);
      if (mismatch) {
        if (isSkip(mismatch)) skips.push(mismatch);
        else if (!directSkip()) return mismatch;
        continue;
      }
      applied++;
    }
    if (skips.length > 0 && (applied === 0 || directSkip())) return { kind: 'nested-skip' } as const;
    for (const [key, sub] of others) {
      const mismatch = this.handle(key, sub, value, path);
      if (mismatch) return mismatch;
    }
    return undefined;
  }

  private handle(
    key: string,
    sub: unknown,
    value: Record<string, unknown>,
    path: string,
  ): Mismatch | undefined {
    const { anchor, name } = parseKey(key);
    const at = child(path, name);
    // The resource's own fields only: `name in value` and `value[name]` also see what every object
    // inherits (`constructor`, `toString`, `__proto__`), which no decoded document has.
    const present = Object.hasOwn(value, name);
    const field = present ? value[name] : undefined;
    switch (anchor) {
      case 'negation':
        return present ? { kind: 'negation', path: at, value: field, pattern: 'absent' } : undefined;
      case 'equality':
        return present ? this.element(field, sub, at) : undefined;
      case 'condition':
        if (!present) return { kind: 'condition' };
        return this.element(field, sub, at) ? { kind: 'condition' } : undefined;
      case 'global':
        if (!present) return undefined;
        return this.element(field, sub, at) ? { kind: 'global' } : undefined;
      case 'existence':
        return present ? this.existence(field, sub, at) : undefined;
      case 'add':
      case 'none':
        if (sub === '*')
          return field !== undefined && field !== null
            ? undefined
            : { kind: 'fail', path: at, value: field, pattern: sub };
        return this.element(field, sub, at);
    }
  }

  private existence(list: unknown, pattern: unknown, path: string): Mismatch | undefined {
    if (!Array.isArray(list) || !Array.isArray(pattern)) return { kind: 'fail', path, value: list, pattern };
    for (const patternMap of pattern) {
      if (!isRecord(patternMap)) return { kind: 'fail', path, value: list, pattern };
      const someMatches = list.some(
        (element, index) => !this.element(element, patternMap, child(path, index)),
      );
      if (!someMatches) return { kind: 'fail', path, value: list, pattern };
    }
    return undefined;
  }

  private list(value: unknown[], pattern: unknown[], path: string): Mismatch | undefined {
    if (pattern.length === 0) return { kind: 'fail', path, value, pattern };
    const first = pattern[0];
    if (isRecord(first)) return this.everyElement(value, first, path);
    if (!Array.isArray(first)) return this.element(value, first, path);
    // Lists of lists: element by element.
    if (value.length < pattern.length) return { kind: 'fail', path, value, pattern };
    let applied = 0;
    let skipped = 0;
    for (let index = 0; index < pattern.length; index++) {
      const mismatch = this.element(value[index], pattern[index], child(path, index));
      if (!mismatch) applied++;
      else if (isSkip(mismatch)) skipped++;
      else return mismatch;
    }
    return applied === 0 && skipped > 0 ? { kind: 'nested-skip' } : undefined;
  }

  private everyElement(
    value: unknown[],
    pattern: Record<string, unknown>,
    path: string,
  ): Mismatch | undefined {
    let applied = 0;
    let skipped = 0;
    for (let index = 0; index < value.length; index++) {
      const mismatch = this.element(value[index], pattern, child(path, index));
      if (!mismatch) applied++;
      else if (isSkip(mismatch)) skipped++;
      else return mismatch;
    }
    return applied === 0 && skipped > 0 ? { kind: 'nested-skip' } : undefined;
  }
}

/** Kyverno evaluates global anchors and keys holding anchors before the plain keys, each group sorted. */
function orderResourceKeys(entries: Array<[string, unknown]>): Array<[string, unknown]> {
  const sorted = [...entries].sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
  const front: Array<[string, unknown]> = [];
  const back: Array<[string, unknown]> = [];
  for (const entry of sorted) {
    if (parseKey(entry[0]).anchor === 'global' || hasNestedAnchors(entry[1])) front.unshift(entry);
    else back.push(entry);
  }
  return [...front, ...back];
}

function hasNestedAnchors(pattern: unknown): boolean {
  if (Array.isArray(pattern)) return pattern.some(hasNestedAnchors);
  if (!isRecord(pattern)) return false;
  return Object.entries(pattern).some(
    ([key, sub]) =>
      (parseKey(key).anchor !== 'none' && parseKey(key).anchor !== 'add') || hasNestedAnchors(sub),
  );
}

function metadataEntry(pattern: Record<string, unknown>, tag: string): [string, unknown] | undefined {
  // Runs for every map of every pattern on every check: no entry pairs, and a key is parsed only
  // when it holds the tag (a key whose name is the tag contains it). `for...in` visits a JSON
  // object's own keys in `Object.entries`' order; an object from JSON has no inherited ones.
  for (const key in pattern) {
    if (!Object.hasOwn(pattern, key) || !key.includes(tag)) continue;
    if (key === tag || parseKey(key).name === tag) return [key, pattern[key]];
  }
  return undefined;
}

function stringEntries(value: unknown): Record<string, string> | undefined {
  if (!isRecord(value)) return undefined;
  const result: Record<string, string> = {};
  for (const [key, item] of Object.entries(value))
    if (typeof item === 'string') defineField(result, key, item);
  return result;
}

const hasWildcard = (text: string): boolean => text.includes('*') || text.includes('?');

/**
 * Kyverno's wildcards.ExpandInMetadata: in a map with `metadata`, a label or annotation key with `*`
 * or `?` becomes the resource's key it matches (anchor kept); no match leaves the key as written.
 */
function expandMetadataWildcards(
  pattern: Record<string, unknown>,
  resource: Record<string, unknown>,
): Record<string, unknown> {
  const metadataPattern = metadataEntry(pattern, 'metadata');
  if (!metadataPattern || !isRecord(metadataPattern[1]) || !isRecord(resource.metadata)) return pattern;
  let metadata: Record<string, unknown> | undefined;
  for (const tag of ['labels', 'annotations']) {
    const tagPattern = metadataEntry(metadataPattern[1], tag);
    const patternData = tagPattern ? stringEntries(tagPattern[1]) : undefined;
    const resourceData = stringEntries(resource.metadata[tag]);
    if (!tagPattern || !patternData || !resourceData) continue;
    if (!Object.keys(patternData).some(hasWildcard)) {
      if (Object.keys(patternData).length === Object.keys(tagPattern[1] as object).length) continue;
    }
    const expanded: Record<string, unknown> = {};
    for (const [key, sub] of Object.entries(patternData)) {
      if (!hasWildcard(key)) {
        defineField(expanded, key, sub);
        continue;
      }
      const { anchor, name, modifier } = parseKey(key);
      const candidates = Object.keys(resourceData).filter((resourceKey) =>
        wildcardMatches(name, resourceKey),
      );
      if (candidates.length > 1) {
        const outcomes = new Set(candidates.map((candidate) => scalarMatches(sub, resourceData[candidate])));
        if (outcomes.size > 1 && anchor !== 'negation')
          throw new AmbiguousPattern(
            `several ${tag} match ${name} and Kyverno checks one of them, chosen at random`,
          );
      }
      const chosen = candidates[0] ?? name;
      defineField(expanded, anchor === 'none' ? chosen : `${modifier}(${chosen})`, sub);
    }
    metadata ??= { ...metadataPattern[1] };
    metadata[tagPattern[0]] = expanded;
  }
  return metadata ? { ...pattern, [metadataPattern[0]]: metadata } : pattern;
}

/** Matches a resource against a pattern; `checkpoint` runs in every step whose count the input decides. */
export function matchPattern(
  pattern: unknown,
  value: unknown,
  checkpoint: () => void = () => {},
): PatternResult {
  const matcher = new Matcher(checkpoint);
  const mismatch = matcher.element(value, pattern, '');
  if (!mismatch) return PASS;
  if (isSkip(mismatch)) return { kind: 'skip' };
  const failure = mismatch as Failure;
  if (failure.kind === 'negation')
    return { kind: 'fail', path: failure.path, value: failure.value, pattern: failure.pattern };
  const missing = [...matcher.anchorsSeen].some(
    ([key, seen]) => !seen && parseKey(key).anchor !== 'negation',
  );
  if (missing)
    return {
      kind: 'error',
      message: 'the pattern fails where one of its anchored keys is missing from the resource',
    };
  return { kind: 'fail', path: failure.path, value: failure.value, pattern: failure.pattern };
}

/** Kyverno variables (`{{ request.object.metadata.name }}`) in a pattern. */
export function usesVariables(pattern: unknown): boolean {
  return JSON.stringify(pattern ?? null).includes('{{');
}
