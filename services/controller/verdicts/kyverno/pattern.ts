import { isRecord } from '../../../model/kubernetes';
import { scalarMatches } from './scalar-pattern';

// Kyverno's `validate.pattern` over a resource (https://kyverno.io/docs/writing-policies/validate/):
// maps match key by key, a list pattern's element applies to every element of the list, and the
// anchors on keys: `(k)` conditional, `=(k)` equality (only if present), `^(k)` existence (some
// element of the list matches), `X(k)` negation (must be absent), `<(k)` global (the whole rule is
// skipped when it does not hold). `+(k)` belongs to mutation and is ignored.

export type PatternResult =
  /** Matched, or a condition was not met (the rule does not apply to this part). */
  | { kind: 'pass' }
  /** A global anchor was not met: the rule is skipped for the whole resource. */
  | { kind: 'skip' }
  | { kind: 'fail'; path: string; value: unknown; pattern: unknown };

const PASS: PatternResult = { kind: 'pass' };

/** Called once per element and key the object holds (the evaluation guard's checkpoint). */
export type Checkpoint = () => void;

const NO_CHECKPOINT: Checkpoint = () => undefined;

type Anchor = 'condition' | 'equality' | 'existence' | 'negation' | 'global' | 'add' | 'none';

function parseKey(key: string): { anchor: Anchor; name: string } {
  const match = /^(\(|=\(|\^\(|X\(|<\(|\+\()(.+)\)$/.exec(key);
  if (!match) return { anchor: 'none', name: key };
  const anchors: Record<string, Anchor> = {
    '(': 'condition',
    '=(': 'equality',
    '^(': 'existence',
    'X(': 'negation',
    '<(': 'global',
    '+(': 'add',
  };
  return { anchor: anchors[match[1]], name: match[2] };
}

function child(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}

/** Whether a value satisfies a pattern, ignoring where it fails (conditions, existence). */
function holds(pattern: unknown, value: unknown, path: string, checkpoint: Checkpoint): boolean {
  const result = matchPattern(pattern, value, path, checkpoint);
  return result.kind === 'pass';
}

function matchList(pattern: unknown[], value: unknown, path: string, checkpoint: Checkpoint): PatternResult {
  if (!Array.isArray(value)) return { kind: 'fail', path, value, pattern };
  // A list pattern with one element applies that element to every element of the list.
  const elementPattern = pattern[0];
  for (let index = 0; index < value.length; index++) {
    checkpoint();
    const result = matchPattern(elementPattern, value[index], child(path, index), checkpoint);
    if (result.kind !== 'pass') return result;
  }
  return PASS;
}

function matchMap(
  pattern: Record<string, unknown>,
  value: unknown,
  path: string,
  checkpoint: Checkpoint,
): PatternResult {
  if (!isRecord(value)) return { kind: 'fail', path, value, pattern };
  const entries = Object.entries(pattern).map(([key, sub]) => ({ ...parseKey(key), sub }));
  // Conditions and global anchors first: when one does not hold, the rest of this map is skipped.
  for (const entry of entries) {
    if (entry.anchor !== 'condition' && entry.anchor !== 'global') continue;
    const present = entry.name in value;
    checkpoint();
    const met = present && holds(entry.sub, value[entry.name], child(path, entry.name), checkpoint);
    if (!met) return entry.anchor === 'global' ? { kind: 'skip' } : PASS;
  }
  for (const entry of entries) {
    checkpoint();
    const key = entry.name;
    const at = child(path, key);
    const present = key in value && value[key] !== undefined;
    switch (entry.anchor) {
      case 'condition':
      case 'global':
      case 'add':
        continue;
      case 'negation':
        if (present) return { kind: 'fail', path: at, value: value[key], pattern: 'absent' };
        continue;
      case 'equality':
        if (!present) continue;
        break;
      case 'existence': {
        const list = value[key];
        const listPattern = entry.sub;
        if (!Array.isArray(list) || !Array.isArray(listPattern))
          return { kind: 'fail', path: at, value: list, pattern: listPattern };
        const exists = list.some((element, index) => {
          checkpoint();
          return holds(listPattern[0], element, child(at, index), checkpoint);
        });
        if (!exists) return { kind: 'fail', path: at, value: list, pattern: listPattern };
        continue;
      }
      default:
        break;
    }
    const result = matchPattern(entry.sub, value[key], at, checkpoint);
    if (result.kind !== 'pass') return result;
  }
  return PASS;
}

export function matchPattern(
  pattern: unknown,
  value: unknown,
  path = '',
  checkpoint: Checkpoint = NO_CHECKPOINT,
): PatternResult {
  if (Array.isArray(pattern)) return matchList(pattern, value, path, checkpoint);
  if (isRecord(pattern)) return matchMap(pattern, value, path, checkpoint);
  return scalarMatches(pattern, value) ? PASS : { kind: 'fail', path, value, pattern };
}

/** Kyverno variables (`{{ request.object.metadata.name }}`) are not substituted here. */
export function usesVariables(pattern: unknown): boolean {
  return JSON.stringify(pattern ?? null).includes('{{');
}
