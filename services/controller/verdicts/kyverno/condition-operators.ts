import { compareQuantities, parseQuantityOrUndefined, type Quantity } from '../../../model/quantity';
import { isRecord } from '../../../model/kubernetes';
import { operatorOf, parseGoDuration, scalarMatches, wildcardMatches } from './scalar-pattern';

// The operators of Kyverno's preconditions and deny conditions, as Kyverno 1.19 evaluates them
// (pkg/engine/variables/operator; https://kyverno.io/docs/writing-policies/preconditions/#operators):
// key and value are what the variables resolved to. Equals/NotEquals compare durations, quantities,
// then text with the value as a wildcard; the In family compares text with wildcards on both sides
// and reads a string value as a JSON list; GreaterThan... compare durations, quantities, numbers and
// semantic versions. An operator Kyverno does not know makes the condition an error.

export class UnknownOperator extends Error {}

const SECOND = 1e9;

/** Kyverno's parseDuration: one side a duration string, the other a duration or seconds. */
function durations(key: unknown, value: unknown): [number, number] | undefined {
  let keyDuration = typeof key === 'string' && key !== '0' ? parseGoDuration(key) : undefined;
  let valueDuration = typeof value === 'string' && value !== '0' ? parseGoDuration(value) : undefined;
  if (keyDuration === undefined && valueDuration === undefined) return undefined;
  if (keyDuration === undefined) {
    if (typeof key !== 'number') return undefined;
    keyDuration = Math.trunc(key) * SECOND;
  }
  if (valueDuration === undefined) {
    if (typeof value !== 'number') return undefined;
    valueDuration = Math.trunc(value) * SECOND;
  }
  return [keyDuration, valueDuration];
}

function quantity(text: unknown): Quantity | undefined {
  if (typeof text !== 'string' || text === '' || text.trim() !== text) return undefined;
  return parseQuantityOrUndefined(text);
}

function deepEqual(left: unknown, right: unknown): boolean {
  return JSON.stringify(sortKeys(left)) === JSON.stringify(sortKeys(right));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isRecord(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys(value[key])]),
  );
}

function parseNumberText(text: string): number | undefined {
  return /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text) ? Number(text) : undefined;
}

/** Equals; `undefined` when Kyverno's handler does not accept the key's type. */
function equals(key: unknown, value: unknown): boolean {
  if (typeof key === 'boolean') return value === key;
  if (typeof key === 'number') {
    if (typeof value === 'number') return value === key;
    if (typeof value === 'string') {
      const parsed = Number.isInteger(key)
        ? /^[-+]?\d+$/.test(value)
          ? Number(value)
          : undefined
        : parseNumberText(value);
      return parsed === key;
    }
    return false;
  }
  if (typeof key === 'string') {
    const pair = durations(key, value);
    if (pair) return pair[0] === pair[1];
    const keyQuantity = quantity(key);
    if (keyQuantity && typeof value === 'string') {
      const valueQuantity = quantity(value);
      return valueQuantity !== undefined && compareQuantities(keyQuantity, valueQuantity) === 0;
    }
    return typeof value === 'string' && wildcardMatches(value, key);
  }
  if (Array.isArray(key)) return Array.isArray(value) && deepEqual(key, value);
  if (isRecord(key)) return isRecord(value) && deepEqual(key, value);
  return false;
}

function notEquals(key: unknown, value: unknown): boolean {
  if (key === null || key === undefined) return false;
  if (typeof key === 'boolean') return typeof value !== 'boolean' || key !== value;
  if (typeof key === 'number') {
    if (typeof value === 'number') return value !== key;
    if (typeof value === 'string') {
      const parsed = Number.isInteger(key)
        ? /^[-+]?\d+$/.test(value)
          ? Number(value)
          : undefined
        : parseNumberText(value);
      return parsed === undefined || parsed !== key;
    }
    return true;
  }
  if (typeof key === 'string') {
    const pair = durations(key, value);
    if (pair) return pair[0] !== pair[1];
    const keyQuantity = quantity(key);
    if (keyQuantity && typeof value === 'string' && value !== '') {
      const valueQuantity = quantity(value);
      return valueQuantity === undefined || compareQuantities(keyQuantity, valueQuantity) !== 0;
    }
    return typeof value === 'string' ? !wildcardMatches(value, key) : true;
  }
  if (Array.isArray(key)) return !Array.isArray(value) || !deepEqual(key, value);
  if (isRecord(key)) return !isRecord(value) || !deepEqual(key, value);
  return false;
}

/** Go's fmt.Sprint of a JSON scalar. */
function sprint(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(sprint).join(' ')}]`;
  return `map[${Object.keys(value)
    .sort()
    .map((key) => `${key}:${sprint((value as Record<string, unknown>)[key])}`)
    .join(' ')}]`;
}

const bothWays = (left: string, right: string): boolean =>
  wildcardMatches(left, right) || wildcardMatches(right, left);

/** A string value is a JSON list of strings, or else a single string; `undefined`: not a list. */
function stringList(text: string, jsonMustBeList: boolean): string[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return jsonMustBeList ? undefined : [text];
  }
  if (Array.isArray(parsed) && parsed.every((item) => typeof item === 'string')) return parsed;
  return undefined;
}

type SetOperator = 'AnyIn' | 'AllIn' | 'AnyNotIn' | 'AllNotIn';

function setHolds(operator: SetOperator, keys: string[], values: string[]): boolean {
  const found = (key: string) => values.some((value) => bothWays(key, value));
  switch (operator) {
    case 'AnyIn':
      return keys.some(found);
    case 'AllIn':
      return keys.every(found);
    case 'AnyNotIn':
      return keys.some((key) => !found(key));
    case 'AllNotIn':
      return !keys.some(found);
  }
}

/** A single key against the value (anyKeyExistsInArray, allKeyExistsInArray). */
function keyIn(key: string, value: unknown): boolean | undefined {
  if (Array.isArray(value)) return value.some((item) => bothWays(sprint(item), key));
  if (typeof value !== 'string') return undefined;
  if (wildcardMatches(value, key)) return true;
  if (operatorOf(value) === '-') return scalarMatches(value, key);
  const list = stringList(value, false);
  if (!list) return undefined;
  return list.includes(key);
}

function setOperator(operator: SetOperator, key: unknown, value: unknown): boolean {
  const negated = operator === 'AnyNotIn' || operator === 'AllNotIn';
  if (typeof key === 'string' || typeof key === 'number' || typeof key === 'boolean') {
    const exists = keyIn(sprint(key), value);
    if (exists === undefined) return false;
    return negated ? !exists : exists;
  }
  if (!Array.isArray(key)) return false;
  const keys = key.map(sprint);
  if (Array.isArray(value)) return setHolds(operator, keys, value.map(sprint));
  if (typeof value === 'number' || typeof value === 'boolean') {
    if (operator === 'AllIn' || operator === 'AllNotIn') return false;
    return setHolds(operator, keys, [sprint(value)]);
  }
  if (typeof value !== 'string') return false;
  if (keys.length === 1 && keys[0] === value) return !negated;
  if (operatorOf(value) === '-') {
    switch (operator) {
      case 'AnyIn':
        return keys.some((item) => scalarMatches(value, item));
      case 'AllIn':
        return keys.every((item) => scalarMatches(value, item));
      case 'AnyNotIn':
        return keys.some((item) => scalarMatches(value.replace('-', '!-'), item));
      case 'AllNotIn':
        return !keys.some((item) => scalarMatches(value, item));
    }
  }
  const list = stringList(value, false);
  if (!list) return false;
  return setHolds(operator, keys, list);
}

/** The deprecated In / NotIn: exact membership for lists of keys. */
function inOperator(key: unknown, value: unknown, negated: boolean): boolean {
  if (typeof key === 'string' || typeof key === 'number' || typeof key === 'boolean') {
    const text = sprint(key);
    let exists: boolean | undefined;
    if (Array.isArray(value)) exists = value.some((item) => bothWays(sprint(item), text));
    else if (typeof value === 'string') {
      if (wildcardMatches(value, text)) exists = true;
      else {
        const list = stringList(value, true);
        exists = list ? list.includes(text) : undefined;
      }
    }
    if (exists === undefined) return false;
    return negated ? !exists : exists;
  }
  if (!Array.isArray(key) || !key.every((item) => typeof item === 'string')) return false;
  const keys = key as string[];
  let values: string[] | undefined;
  if (Array.isArray(value)) {
    if (!value.every((item) => typeof item === 'string')) return false;
    values = value as string[];
  } else if (typeof value === 'string') {
    if (keys.length === 1 && keys[0] === value) return !negated;
    values = stringList(value, true);
  }
  if (!values) return false;
  const set = new Set(values);
  return negated ? !keys.some((item) => set.has(item)) : keys.every((item) => set.has(item));
}

type Comparison = 'GreaterThan' | 'GreaterThanOrEquals' | 'LessThan' | 'LessThanOrEquals';

function compareBy(sign: number, comparison: Comparison): boolean {
  switch (comparison) {
    case 'GreaterThan':
      return sign > 0;
    case 'GreaterThanOrEquals':
      return sign >= 0;
    case 'LessThan':
      return sign < 0;
    case 'LessThanOrEquals':
      return sign <= 0;
  }
}

function numericAgainst(key: number, value: unknown, comparison: Comparison): boolean {
  if (typeof value === 'number') return compareBy(Math.sign(key - value), comparison);
  if (typeof value !== 'string') return false;
  const pair = durations(key, value);
  if (pair) return compareBy(Math.sign(pair[0] - pair[1]), comparison);
  const parsed = parseNumberText(value);
  return parsed !== undefined && compareBy(Math.sign(key - parsed), comparison);
}

const SEMVER = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

function compareSemver(left: RegExpExecArray, right: RegExpExecArray): number {
  for (let index = 1; index <= 3; index++) {
    const difference = Number(left[index]) - Number(right[index]);
    if (difference !== 0) return Math.sign(difference);
  }
  if (left[4] === right[4]) return 0;
  if (left[4] === undefined) return 1;
  if (right[4] === undefined) return -1;
  return left[4] < right[4] ? -1 : 1;
}

function numeric(key: unknown, value: unknown, comparison: Comparison): boolean {
  if (typeof key === 'number') return numericAgainst(key, value, comparison);
  if (typeof key !== 'string') return false;
  const pair = durations(key, value);
  if (pair) return compareBy(Math.sign(pair[0] - pair[1]), comparison);
  const keyQuantity = quantity(key);
  const valueQuantity = quantity(value);
  if (keyQuantity && valueQuantity)
    return compareBy(compareQuantities(keyQuantity, valueQuantity), comparison);
  const number = parseNumberText(key);
  if (number !== undefined) return numericAgainst(number, value, comparison);
  const version = SEMVER.exec(key);
  const other = typeof value === 'string' ? SEMVER.exec(value) : null;
  if (version && other) return compareBy(compareSemver(version, other), comparison);
  return false;
}

function durationOperator(key: unknown, value: unknown, comparison: Comparison): boolean {
  const toNanoseconds = (side: unknown): number | undefined =>
    typeof side === 'number'
      ? Math.trunc(side) * SECOND
      : typeof side === 'string'
        ? parseGoDuration(side)
        : undefined;
  const left = toNanoseconds(key);
  const right = toNanoseconds(value);
  if (left === undefined || right === undefined) return false;
  return compareBy(Math.sign(left - right), comparison);
}

/** Evaluates one condition's operator on its resolved key and value (operator names are case-insensitive). */
export function evaluateOperator(operator: string, key: unknown, value: unknown): boolean {
  switch (operator.toLowerCase()) {
    case 'equal':
    case 'equals':
      return equals(key, value);
    case 'notequal':
    case 'notequals':
      return notEquals(key, value);
    case 'in':
      return inOperator(key, value, false);
    case 'notin':
      return inOperator(key, value, true);
    case 'anyin':
      return setOperator('AnyIn', key, value);
    case 'allin':
      return setOperator('AllIn', key, value);
    case 'anynotin':
      return setOperator('AnyNotIn', key, value);
    case 'allnotin':
      return setOperator('AllNotIn', key, value);
    case 'greaterthan':
      return numeric(key, value, 'GreaterThan');
    case 'greaterthanorequals':
      return numeric(key, value, 'GreaterThanOrEquals');
    case 'lessthan':
      return numeric(key, value, 'LessThan');
    case 'lessthanorequals':
      return numeric(key, value, 'LessThanOrEquals');
    case 'durationgreaterthan':
      return durationOperator(key, value, 'GreaterThan');
    case 'durationgreaterthanorequals':
      return durationOperator(key, value, 'GreaterThanOrEquals');
    case 'durationlessthan':
      return durationOperator(key, value, 'LessThan');
    case 'durationlessthanorequals':
      return durationOperator(key, value, 'LessThanOrEquals');
    default:
      throw new UnknownOperator(`Kyverno has no condition operator ${operator}`);
  }
}
