import { compareQuantities, parseQuantityOrUndefined, type Quantity } from '../../../model/quantity';
import { matchesWildcard } from '../../../model/wildcard';

// Kyverno's scalar patterns as Kyverno 1.19 evaluates them (pkg/engine/pattern,
// https://kyverno.io/docs/writing-policies/validate/#wildcards and #operators): `|` (any) of `&` (all)
// of: wildcards `*` and `?`, `!` negation, `>`, `<`, `>=`, `<=`, ranges `a-b` and `a!-b`; each compared
// as a Go duration when both sides are one, else as a quantity when both are one, else as text.

/** Go's go-wildcard: `*` any run of characters, `?` exactly one; an empty pattern matches only "". */
export function wildcardMatches(pattern: string, value: string): boolean {
  if (pattern === '') return value === '';
  // Linear in pattern and value (model/wildcard.ts), never a backtracking regular expression.
  return matchesWildcard(pattern, value);
}

const DURATION_UNITS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  µs: 1e3,
  μs: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

/** Go's time.ParseDuration, in nanoseconds: `300ms`, `-1.5h`, `2h45m`, `0`. */
export function parseGoDuration(text: string): number | undefined {
  if (text === '0' || text === '+0' || text === '-0') return 0;
  const match = /^([-+]?)((?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)$/.exec(text);
  if (!match) return undefined;
  let total = 0;
  for (const part of match[2].matchAll(/(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g))
    total += Number(part[1]) * DURATION_UNITS[part[2]];
  return match[1] === '-' ? -total : total;
}

function parseQuantityText(text: string): Quantity | undefined {
  if (text.trim() !== text || text === '') return undefined;
  return parseQuantityOrUndefined(text);
}

/** Go's convertNumberToString: nil is "0", floats print with six decimals. */
function numberText(value: unknown): string | undefined {
  if (value === null || value === undefined) return '0';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : value.toFixed(6);
  return undefined;
}

type Operator = '' | '>=' | '<=' | '>' | '<' | '!' | '-' | '!-';

const IN_RANGE = /^([-|+]?\d+(?:\.\d+)?[A-Za-z]*)-([-|+]?\d+(?:\.\d+)?[A-Za-z]*)$/;
const NOT_IN_RANGE = /^([-|+]?\d+(?:\.\d+)?[A-Za-z]*)!-([-|+]?\d+(?:\.\d+)?[A-Za-z]*)$/;

export function operatorOf(pattern: string): Operator {
  if (pattern.length < 2) return '';
  for (const operator of ['>=', '<=', '>', '<', '!'] as const)
    if (pattern.startsWith(operator)) return operator;
  if (NOT_IN_RANGE.test(pattern)) return '!-';
  if (IN_RANGE.test(pattern)) return '-';
  return '';
}

function compareBy(result: number, operator: Operator): boolean | undefined {
  switch (operator) {
    case '':
      return result === 0;
    case '!':
      return result !== 0;
    case '>':
      return result > 0;
    case '<':
      return result < 0;
    case '>=':
      return result >= 0;
    case '<=':
      return result <= 0;
    default:
      return undefined;
  }
}

/** Go's FormatFloat(v, 'E', -1, 64): `1.5E+00`. */
function goExponent(value: number): string {
  const [mantissa, exponent] = value.toExponential().toUpperCase().split('E');
  const sign = exponent.startsWith('-') ? '-' : '+';
  const digits = exponent.replace(/^[+-]/, '').padStart(2, '0');
  return `${mantissa}E${sign}${digits}`;
}

function compareText(value: unknown, pattern: string, operator: Operator): boolean {
  if (operator !== '' && operator !== '!') return false;
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number') text = Number.isInteger(value) ? String(value) : goExponent(value);
  else if (typeof value === 'boolean') text = String(value);
  else return false;
  const matched = wildcardMatches(pattern, text);
  return operator === '!' ? !matched : matched;
}

function validateString(value: unknown, pattern: string, operator: Operator): boolean {
  const valueText = numberText(value);
  const patternDuration = parseGoDuration(pattern);
  if (patternDuration !== undefined && valueText !== undefined) {
    const valueDuration = parseGoDuration(valueText);
    if (valueDuration !== undefined) {
      const result = compareBy(Math.sign(valueDuration - patternDuration), operator);
      if (result !== undefined) return result;
    }
  }
  const patternQuantity = parseQuantityText(pattern);
  if (patternQuantity && valueText !== undefined) {
    const valueQuantity = parseQuantityText(valueText);
    if (valueQuantity) {
      const result = compareBy(compareQuantities(valueQuantity, patternQuantity), operator);
      if (result !== undefined) return result;
    }
  }
  return compareText(value, pattern, operator);
}

function validateStringPattern(value: unknown, pattern: string): boolean {
  const operator = operatorOf(pattern);
  if (operator === '-') {
    const [, low, high] = IN_RANGE.exec(pattern) ?? [];
    return validateStringPattern(value, `>= ${low}`) && validateStringPattern(value, `<= ${high}`);
  }
  if (operator === '!-') {
    const [, low, high] = NOT_IN_RANGE.exec(pattern) ?? [];
    return validateStringPattern(value, `< ${low}`) || validateStringPattern(value, `> ${high}`);
  }
  return validateString(value, pattern.slice(operator.length).trim(), operator);
}

function parseGoFloat(text: string): number | undefined {
  return /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text) ? Number(text) : undefined;
}

/** Whether a scalar value satisfies a scalar pattern (pkg/engine/pattern Validate). */
export function scalarMatches(pattern: unknown, value: unknown): boolean {
  if (typeof pattern === 'string') {
    if (value === pattern) return true;
    return pattern.split('|').some((alternative) =>
      alternative
        .trim()
        .split('&')
        .every((condition) => validateStringPattern(value, condition.trim())),
    );
  }
  if (typeof pattern === 'number') {
    if (typeof value === 'number') return value === pattern;
    if (typeof value === 'string')
      return Number.isInteger(pattern) && /^[-+]?\d+$/.test(value)
        ? Number(value) === pattern
        : parseGoFloat(value) === pattern;
    return false;
  }
  if (typeof pattern === 'boolean') return value === pattern;
  if (pattern === null || pattern === undefined)
    return value === null || value === undefined || value === 0 || value === '' || value === false;
  if (typeof pattern === 'object' && !Array.isArray(pattern))
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  return false;
}
