import { compareQuantities, parseQuantity, type Quantity } from '../../../model/quantity';
import { matchesWildcard } from '../../../model/wildcard';

// Kyverno's scalar patterns (https://kyverno.io/docs/writing-policies/validate/#wildcards and
// #operators): wildcards `*` and `?`, `!` negation, `>`, `<`, `>=`, `<=`, ranges `a-b` and `a!-b`,
// `|` (any) and `&` (all), with numbers and quantities compared by value. Durations (`1h`) are not
// compared as durations here: such patterns are compared as text. Wildcards are matched in linear
// time (model/wildcard.ts), never through a backtracking regular expression.

function asQuantity(value: unknown): Quantity | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  try {
    return parseQuantity(String(value));
  } catch {
    return undefined;
  }
}

function compare(value: unknown, bound: string): number | undefined {
  const left = asQuantity(value);
  const right = asQuantity(bound);
  return left && right ? compareQuantities(left, right) : undefined;
}

function valueText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

const RANGE = /^(-?[^!-]+)(!?)-(-?[^-]+)$/;

function singleMatches(pattern: string, value: unknown): boolean {
  for (const [operator, test] of [
    ['>=', (result: number) => result >= 0],
    ['<=', (result: number) => result <= 0],
    ['>', (result: number) => result > 0],
    ['<', (result: number) => result < 0],
  ] as const)
    if (pattern.startsWith(operator)) {
      const result = compare(value, pattern.slice(operator.length).trim());
      return result !== undefined && test(result);
    }
  const range = RANGE.exec(pattern);
  if (range && asQuantity(range[1]) && asQuantity(range[3])) {
    const low = compare(value, range[1]);
    const high = compare(value, range[3]);
    if (low === undefined || high === undefined) return false;
    const inside = low >= 0 && high <= 0;
    return range[2] === '!' ? !inside : inside;
  }
  if (pattern.startsWith('!')) return !singleMatches(pattern.slice(1), value);
  const numeric = compare(value, pattern);
  if (numeric !== undefined && typeof value === 'number') return numeric === 0;
  return matchesWildcard(pattern, valueText(value));
}

/** Whether a scalar value satisfies a scalar pattern (string patterns may hold operators). */
export function scalarMatches(pattern: unknown, value: unknown): boolean {
  if (typeof pattern === 'string') {
    if (pattern.includes('|')) return pattern.split('|').some((part) => scalarMatches(part.trim(), value));
    if (pattern.includes('&')) return pattern.split('&').every((part) => scalarMatches(part.trim(), value));
    if (value === undefined) return false;
    return singleMatches(pattern, value);
  }
  if (typeof pattern === 'number') {
    const numeric = compare(value, String(pattern));
    return numeric === 0;
  }
  if (pattern === null) return value === null || value === undefined;
  return pattern === value;
}
