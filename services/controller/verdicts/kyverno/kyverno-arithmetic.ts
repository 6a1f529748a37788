import {
  addQuantities,
  divideQuantities,
  parseQuantity,
  subtractQuantities,
  type Quantity,
} from '../../../model/quantity';
import { KyvernoRuleError } from './kyverno-errors';
import { ownEntry } from '../../../model/own-entry';

// Kyverno's JMESPath arithmetic (pkg/engine/jmespath/arithmetic.go): an operand is a number
// (scalar), or a string read first as a Kubernetes quantity (`250m`, `1Gi`, `3`) and else as a Go
// duration (`1h30m`). Quantity ± quantity is a quantity, duration ± duration a duration; quantity /
// quantity and duration / duration are numbers; quantity or duration × or ÷ a number keep their
// type; any other mix is Kyverno's type-mismatch error. `sum` adds an array's elements in order with
// the same rules. Pure functions of their arguments, callable from any thread.
//
// Results that are quantities or durations are strings, as Kyverno's are. Their spelling follows
// apimachinery's canonical forms for the common cases (largest exact suffix, binary when the first
// operand was binary); Kyverno's conditions compare them as quantities, so the value is what counts.

type Operand =
  | { type: 'scalar'; value: number }
  /** `scale`: decimal digits of the quantity as written (apimachinery's AsDec().Scale()). */
  | { type: 'quantity'; value: Quantity; binary: boolean; scale: number }
  | { type: 'duration'; nanoseconds: number };

const GO_DURATION_PART = /(\d*\.?\d+)(ns|us|µs|μs|ms|s|m|h)/g;
const GO_DURATION = /^[-+]?((\d*\.?\d+)(ns|us|µs|μs|ms|s|m|h))+$|^[-+]?0$/;
const NANOSECONDS: Readonly<Record<string, number>> = {
  ns: 1,
  us: 1e3,
  µs: 1e3,
  μs: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

/** Go's time.ParseDuration, in nanoseconds; undefined when the text is not a duration. */
function parseDuration(text: string): number | undefined {
  if (!GO_DURATION.test(text)) return undefined;
  const sign = text.startsWith('-') ? -1 : 1;
  let total = 0;
  for (const match of text.matchAll(GO_DURATION_PART)) total += Number(match[1]) * NANOSECONDS[match[2]];
  return sign * total;
}

function operandOf(value: unknown, operator: string): Operand {
  if (typeof value === 'number') return { type: 'scalar', value };
  if (typeof value === 'string') {
    try {
      const written = value.trim();
      return {
        type: 'quantity',
        value: parseQuantity(written),
        binary: /[KMGTPE]i$/.test(written),
        scale: writtenScale(written),
      };
    } catch {
      const nanoseconds = parseDuration(value.trim());
      if (nanoseconds !== undefined) return { type: 'duration', nanoseconds };
    }
  }
  throw new KyvernoRuleError(`${operator}: invalid operand ${JSON.stringify(value) ?? 'undefined'}`);
}

const SUFFIX_SCALES: Readonly<Record<string, number>> = {
  n: 9,
  u: 6,
  m: 3,
  k: -3,
  M: -6,
  G: -9,
  T: -12,
  P: -15,
  E: -18,
};

/** The decimal scale of a quantity as written: `1500m` is 3, `1.5` is 1, `2k` is -3, `1Gi` is 0. */
function writtenScale(written: string): number {
  const match = /^[+-]?\d*(?:\.(\d*))?(.*)$/.exec(written);
  const fraction = match?.[1]?.length ?? 0;
  const suffix = match?.[2] ?? '';
  const exponent = /^[eE]([+-]?\d+)$/.exec(suffix);
  if (exponent) return fraction - Number(exponent[1]);
  return fraction + (ownEntry(SUFFIX_SCALES, suffix) ?? 0);
}

const mismatch = (operator: string) => new KyvernoRuleError(`${operator}: types mismatch`);
const zeroDivision = (operator: string) => new KyvernoRuleError(`${operator}: zero divisor`);

const asNumber = (quantity: Quantity): number => Number(quantity.numerator) / Number(quantity.denominator);

const DECIMAL_SUFFIXES: Array<[string, bigint]> = [
  ['E', 10n ** 18n],
  ['P', 10n ** 15n],
  ['T', 10n ** 12n],
  ['G', 10n ** 9n],
  ['M', 10n ** 6n],
  ['k', 10n ** 3n],
];
const BINARY_SUFFIXES: Array<[string, bigint]> = [
  ['Ei', 1n << 60n],
  ['Pi', 1n << 50n],
  ['Ti', 1n << 40n],
  ['Gi', 1n << 30n],
  ['Mi', 1n << 20n],
  ['Ki', 1n << 10n],
];
const FRACTION_SUFFIXES: Array<[string, bigint]> = [
  ['m', 10n ** 3n],
  ['u', 10n ** 6n],
  ['n', 10n ** 9n],
];

/** A quantity as apimachinery's Quantity.String() spells the usual values. */
export function canonicalQuantity(quantity: Quantity, binary: boolean): string {
  const { numerator, denominator } = quantity;
  if (numerator === 0n) return '0';
  if (denominator === 1n) {
    const magnitude = numerator < 0n ? -numerator : numerator;
    if (binary && magnitude >= 1024n)
      for (const [suffix, size] of BINARY_SUFFIXES)
        if (numerator % size === 0n) return `${numerator / size}${suffix}`;
    for (const [suffix, size] of DECIMAL_SUFFIXES)
      if (numerator % size === 0n) return `${numerator / size}${suffix}`;
    return numerator.toString();
  }
  for (const [suffix, scale] of FRACTION_SUFFIXES)
    if ((numerator * scale) % denominator === 0n) return `${(numerator * scale) / denominator}${suffix}`;
  // Below a nanounit apimachinery rounds up to the next one.
  const nano = (numerator * 10n ** 9n + denominator - 1n) / denominator;
  return `${nano}n`;
}

/** Go's time.Duration.String(): `1h30m0s`, `1.5s`, `500ms`, `0s`. */
export function goDurationString(nanoseconds: number): string {
  const total = Math.trunc(nanoseconds);
  if (total === 0) return '0s';
  const sign = total < 0 ? '-' : '';
  const magnitude = Math.abs(total);
  const trimmed = (value: number, digits: number) => value.toFixed(digits).replace(/\.?0+$/, '');
  if (magnitude < 1e3) return `${sign}${magnitude}ns`;
  if (magnitude < 1e6) return `${sign}${trimmed(magnitude / 1e3, 3)}µs`;
  if (magnitude < 1e9) return `${sign}${trimmed(magnitude / 1e6, 6)}ms`;
  const hours = Math.floor(magnitude / 3600e9);
  const minutes = Math.floor((magnitude % 3600e9) / 60e9);
  const seconds = trimmed((magnitude % 60e9) / 1e9, 9);
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}

function addOperands(left: Operand, right: Operand, operator: string, sign: 1 | -1): unknown {
  if (left.type === 'quantity' && right.type === 'quantity') {
    const value =
      sign === 1 ? addQuantities(left.value, right.value) : subtractQuantities(left.value, right.value);
    return canonicalQuantity(value, left.binary);
  }
  if (left.type === 'duration' && right.type === 'duration')
    return goDurationString(left.nanoseconds + sign * right.nanoseconds);
  if (left.type === 'scalar' && right.type === 'scalar') return left.value + sign * right.value;
  throw mismatch(operator);
}

/** Kyverno's `add`. */
export function kyvernoAdd(left: unknown, right: unknown): unknown {
  return addOperands(operandOf(left, 'add'), operandOf(right, 'add'), 'add', 1);
}

/** Kyverno's `subtract`. */
export function kyvernoSubtract(left: unknown, right: unknown): unknown {
  return addOperands(operandOf(left, 'subtract'), operandOf(right, 'subtract'), 'subtract', -1);
}

/** Kyverno's `sum`: the array's elements added in order; an empty array is an error. */
export function kyvernoSum(items: unknown): unknown {
  if (!Array.isArray(items)) throw mismatch('sum');
  if (items.length === 0) throw new KyvernoRuleError('sum: at least one element in the array is required');
  let result: unknown = items[0];
  for (const item of items.slice(1))
    result = addOperands(operandOf(result, 'sum'), operandOf(item, 'sum'), 'sum', 1);
  return result;
}

/** Kyverno's `multiply`: a quantity or duration by a number keeps its type. */
export function kyvernoMultiply(left: unknown, right: unknown): unknown {
  const [a, b] = [operandOf(left, 'multiply'), operandOf(right, 'multiply')];
  if (a.type === 'scalar' && b.type === 'scalar') return a.value * b.value;
  const [typed, factor] = a.type === 'scalar' ? [b, a] : [a, b];
  if (factor.type !== 'scalar') throw mismatch('multiply');
  if (typed.type === 'quantity') {
    const scaled = parseQuantity(String(factor.value));
    return canonicalQuantity(
      {
        numerator: typed.value.numerator * scaled.numerator,
        denominator: typed.value.denominator * scaled.denominator,
      },
      typed.binary,
    );
  }
  if (typed.type === 'duration') return goDurationString(typed.nanoseconds * factor.value);
  throw mismatch('multiply');
}

/** Kyverno's `divide`: quantity / quantity and duration / duration are numbers. */
export function kyvernoDivide(left: unknown, right: unknown): unknown {
  const [a, b] = [operandOf(left, 'divide'), operandOf(right, 'divide')];
  if (a.type === 'quantity' && b.type === 'quantity') {
    if (b.value.numerator === 0n) throw zeroDivision('divide');
    return asNumber(a.value) / asNumber(b.value);
  }
  if (a.type === 'duration' && b.type === 'duration') {
    if (b.nanoseconds === 0) throw zeroDivision('divide');
    return a.nanoseconds / b.nanoseconds;
  }
  if (b.type !== 'scalar') throw mismatch('divide');
  if (b.value === 0) throw zeroDivision('divide');
  if (a.type === 'scalar') return a.value / b.value;
  if (a.type === 'duration') return goDurationString(a.nanoseconds / b.value);
  // Kyverno rounds the quotient toward zero at the larger decimal scale of the operands (inf.RoundDown).
  const divisor = parseQuantity(String(b.value));
  const quotient = divideQuantities(a.value, divisor);
  const digits = Math.max(a.scale, writtenScale(String(b.value)), 0);
  const scale = 10n ** BigInt(digits);
  const truncated = (quotient.numerator * scale) / quotient.denominator;
  return canonicalQuantity({ numerator: truncated, denominator: scale }, a.binary);
}

/** Kyverno's `modulo`: whole quantities, durations or numbers of one type. */
export function kyvernoModulo(left: unknown, right: unknown): unknown {
  const [a, b] = [operandOf(left, 'modulo'), operandOf(right, 'modulo')];
  if (a.type === 'scalar' && b.type === 'scalar') {
    if (!Number.isInteger(a.value) || !Number.isInteger(b.value))
      throw new KyvernoRuleError('modulo: non-integer argument(s) for modulo');
    if (b.value === 0) throw zeroDivision('modulo');
    return a.value % b.value;
  }
  if (a.type === 'quantity' && b.type === 'quantity') {
    if (a.value.denominator !== 1n || b.value.denominator !== 1n)
      throw new KyvernoRuleError('modulo: non-integer argument(s) for modulo');
    if (b.value.numerator === 0n) throw zeroDivision('modulo');
    return canonicalQuantity({ numerator: a.value.numerator % b.value.numerator, denominator: 1n }, a.binary);
  }
  if (a.type === 'duration' && b.type === 'duration') {
    if (b.nanoseconds === 0) throw zeroDivision('modulo');
    return goDurationString(a.nanoseconds % b.nanoseconds);
  }
  throw mismatch('modulo');
}
