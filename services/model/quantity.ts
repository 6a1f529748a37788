// Exact Kubernetes quantities (apimachinery resource.Quantity): `3200m`, `8Gi`, `1e3`, `1.5`.
// Values are kept as a fraction of BigInts so `3200m` of `4` is exactly 80%, never 79.99999.
// client-node's `quantityToScalar` returns floats for fractional values, and no npm package follows
// apimachinery's parser to its edges, so the parser is written here after
// k8s.io/apimachinery@v0.34.4 pkg/api/resource/quantity.go (ParseQuantity, parseQuantityString) and
// suffix.go (interpret). It accepts exactly what the API server accepts, gives the value the server
// stores, and runs in time linear in the input: one scan, then BigInt arithmetic on at most
// MAX_INTEGER_DIGITS + 9 digits (V8 turns a decimal string into a BigInt in quadratic time, so a long
// digit string is never converted whole).

export class QuantityError extends Error {}

export interface Quantity {
  numerator: bigint;
  denominator: bigint;
}

// The server's own error texts (quantity.go ErrFormatWrong, ErrNumeric, ErrSuffix).
const SPLIT_PATTERN = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
const FORMAT_WRONG = `quantities must match the regular expression '${SPLIT_PATTERN}'`;
const NUMERIC = 'unable to parse numeric part of quantity';
const SUFFIX = "unable to parse quantity's suffix";

/**
 * The one place Forewarn is stricter than the server: a quantity with more digits before the point
 * is not compared exactly here. The server stores `1e999999999` (10^999,999,999) as a mantissa and a
 * scale but cannot add or round it without building the whole number; no real request or quota comes
 * near 10^1000 (the largest the server's own int64 fast path holds is 9.2 × 10^18).
 */
export const MAX_INTEGER_DIGITS = 1000;

const BINARY_EXPONENTS: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

const DECIMAL_EXPONENTS: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

// quantity.go maxInt64Factors: the int64 fast path takes at most 18 digits.
const FAST_PATH_DIGITS = 18;
// Nano: every value is rounded up (away from zero) to a multiple of 10^-9.
const NANO_DIGITS = 9;
const NANO = 1_000_000_000n;
// The cap the server applies to binary-suffixed values: the largest int64.
const MAX_INT64 = (1n << 63n) - 1n;

// Runs of one character class, found by the regular-expression engine from a given position: a
// single class repeated cannot backtrack, and the engine's compiled scan is fast from the first call
// (a character loop in JavaScript runs in the interpreter until V8 optimises it).
const DIGIT_RUN = /[0-9]*/y;
const ZERO_RUN = /0*/y;
const SUFFIX_RUN = /[eEinumkKMGTP]*/y;

function runEnd(run: RegExp, text: string, from: number): number {
  run.lastIndex = from;
  run.exec(text);
  return run.lastIndex;
}

// Go's int32(x) and int32 arithmetic wrap; the server computes scales that way.
function int32(value: number): number {
  return Number(BigInt.asIntN(32, BigInt(value)));
}

interface ScannedQuantity {
  negative: boolean;
  /** `value` in quantity.go: the text before the suffix, sign and leading zeros included. */
  numberText: string;
  /** Integer digits without leading zeros; '' when there are none. */
  whole: string;
  /** Digits after the point as written. */
  fraction: string;
  suffix: string;
}

/** parseQuantityString: one pass over the text, the same accept/reject decisions. */
function scanQuantity(text: string): ScannedQuantity {
  const end = text.length;
  let position = 0;
  let negative = false;
  if (text[0] === '-' || text[0] === '+') {
    negative = text[0] === '-';
    position++;
  }
  position = runEnd(ZERO_RUN, text, position);
  const zero = { negative, numberText: text, whole: '', fraction: '', suffix: '' };
  if (position >= end) return zero;
  const wholeStart = position;
  position = runEnd(DIGIT_RUN, text, position);
  const whole = text.slice(wholeStart, position);
  if (position >= end) return { ...zero, whole };
  let fraction = '';
  if (text[position] === '.') {
    position++;
    const fractionStart = position;
    position = runEnd(DIGIT_RUN, text, position);
    fraction = text.slice(fractionStart, position);
    if (position >= end) return { ...zero, whole, fraction };
  }
  const numberText = text.slice(0, position);
  const suffixStart = position;
  position = runEnd(SUFFIX_RUN, text, position);
  if (position < end && (text[position] === '-' || text[position] === '+')) position++;
  position = runEnd(DIGIT_RUN, text, position);
  if (position < end) throw new QuantityError(FORMAT_WRONG);
  return { negative, numberText, whole, fraction, suffix: text.slice(suffixStart) };
}

type Interpreted = { base: 10 | 2; exponent: number };

/** suffixHandler.interpret: SI suffixes, binary suffixes, or `e`/`E` and an int64 (kept as int32). */
function interpretSuffix(suffix: string): Interpreted {
  if (suffix in DECIMAL_EXPONENTS) return { base: 10, exponent: DECIMAL_EXPONENTS[suffix] };
  if (suffix in BINARY_EXPONENTS) return { base: 2, exponent: BINARY_EXPONENTS[suffix] };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    // strconv.ParseInt(s, 10, 64): an optional sign and decimal digits, within int64.
    const match = /^([+-]?)([0-9]+)$/.exec(suffix.slice(1));
    if (!match) throw new QuantityError(SUFFIX);
    const significant = match[2].replace(/^0+(?=[0-9])/, '');
    // Beyond 19 significant digits it cannot be an int64 (and is never handed to BigInt whole).
    if (significant.length > 19) throw new QuantityError(SUFFIX);
    const parsed = BigInt(match[1] + significant);
    if (parsed !== BigInt.asIntN(64, parsed)) throw new QuantityError(SUFFIX);
    return { base: 10, exponent: Number(BigInt.asIntN(32, parsed)) };
  }
  throw new QuantityError(SUFFIX);
}

function tooLarge(): QuantityError {
  return new QuantityError(
    `the quantity has more than ${MAX_INTEGER_DIGITS} digits before the point; Forewarn does not compare it`,
  );
}

/**
 * digits × 10^power rounded up to a multiple of 10^-9 (inf.Dec Round with RoundUp on a non-negative
 * amount), as a fraction over 10^9. Linear: digits beyond the nano place are only tested for zero.
 */
function roundUpToNano(digits: string, power: number): Quantity {
  const significant = digits.replace(/^0+/, '');
  if (significant === '') return { numerator: 0n, denominator: 1n };
  if (significant.length + power > MAX_INTEGER_DIGITS) throw tooLarge();
  const nanoPower = power + NANO_DIGITS;
  if (nanoPower >= 0) return { numerator: BigInt(significant + '0'.repeat(nanoPower)), denominator: NANO };
  const kept = significant.slice(0, Math.max(0, significant.length + nanoPower));
  const dropped = significant.slice(kept.length);
  const roundedUp = /[1-9]/.test(dropped) ? 1n : 0n;
  return { numerator: BigInt(kept || '0') + roundedUp, denominator: NANO };
}

/**
 * (whole.fraction) × 2^exponent rounded up to a multiple of 10^-9, capped at the largest int64.
 * With F fraction digits beyond the nano place, the value over 10^-9 is digits × 2^k / 10^(F-9):
 * the digits split into a head whose product is exact and a tail whose contribution is below one,
 * so the rounding only asks whether the tail is zero (10^60 is a multiple of 2^60, so the first 60
 * tail digits decide the carry exactly and the rest only whether anything is left).
 */
function binaryToNano(whole: string, fraction: string, exponent: number): Quantity {
  // At least 10^20 before the point: beyond the int64 cap whatever the fraction.
  if (whole.length > 20) return { numerator: MAX_INT64, denominator: 1n };
  const multiplier = 1n << BigInt(exponent);
  let nanos: bigint;
  if (fraction.length <= NANO_DIGITS) {
    nanos = BigInt((whole || '0') + fraction.padEnd(NANO_DIGITS, '0')) * multiplier;
  } else {
    const head = BigInt((whole || '0') + fraction.slice(0, NANO_DIGITS)) * multiplier;
    const tail = fraction.slice(NANO_DIGITS);
    const decisive = tail.slice(0, 60);
    const scaled = BigInt(decisive || '0') * multiplier;
    const scale = 10n ** BigInt(decisive.length);
    const carry = scaled / scale;
    const remainderIsZero = scaled % scale === 0n && !/[1-9]/.test(tail.slice(decisive.length));
    nanos = head + carry + (remainderIsZero ? 0n : 1n);
  }
  if (nanos > MAX_INT64 * NANO) return { numerator: MAX_INT64, denominator: 1n };
  return { numerator: nanos, denominator: NANO };
}

/**
 * A quantity as the API server parses it (resource.ParseQuantity after the JSON decoder's
 * TrimSpace): the same texts accepted, the same value (rounded up to 10^-9, binary values capped at
 * 2^63-1). A number is taken in its decimal text, as YAML and JSON hand it over.
 */
// Every admission check parses the same few quota and limit strings (`4`, `8Gi`, `500m`) of the
// namespace's policies and of the object: a bounded memo of parsed values took parsing from about 5%
// of the controller's CPU per distinct review to nothing (docs/benchmarks.md, issue 26). Values are
// frozen, so no caller can alter a shared one; the memo starts over when full, and keeps only short
// texts, so that hostile 64,000-digit quantities cannot fill memory through it.
const PARSED_QUANTITIES_LIMIT = 4096;
const REMEMBERED_TEXT_LENGTH = 64;
const parsedQuantities = new Map<string, Quantity>();

export function parseQuantity(input: string | number): Quantity {
  const text = typeof input === 'number' ? String(input) : input.trim();
  const known = parsedQuantities.get(text);
  if (known !== undefined) return known;
  const parsed = Object.freeze(parseQuantityChecked(text));
  if (text.length <= REMEMBERED_TEXT_LENGTH) {
    if (parsedQuantities.size >= PARSED_QUANTITIES_LIMIT) parsedQuantities.clear();
    parsedQuantities.set(text, parsed);
  }
  return parsed;
}

/**
 * Every text parseQuantity accepts has this shape (a sign, digits and points, suffix letters, a
 * signed exponent), after the JSON decoder's trim: a text without it is not a quantity, which
 * parseQuantityOrUndefined tells without the two errors, and their stack traces, of a failed parse.
 */
const QUANTITY_SHAPE = /^[+-]?[0-9.]*[eEinumkKMGTP]*[-+]?[0-9]*$/;

/**
 * The quantity a text is, or undefined when it is not one (what callers that try a text as a
 * quantity ask: Kyverno's patterns and conditions, CEL's isQuantity). The same answers as catching
 * parseQuantity's error; most such texts (image names, wildcards) are refused by their shape alone,
 * which in a Kyverno pattern match was 5% of the controller's CPU per review as thrown errors.
 */
export function parseQuantityOrUndefined(input: string | number): Quantity | undefined {
  if (typeof input === 'string' && !QUANTITY_SHAPE.test(input.trim())) return undefined;
  try {
    return parseQuantity(input);
  } catch {
    return undefined;
  }
}

function parseQuantityChecked(text: string): Quantity {
  try {
    return normalise(parseQuantityText(text));
  } catch (error) {
    if (error instanceof QuantityError)
      throw new QuantityError(`${describeInput(text)} is not a Kubernetes quantity: ${error.message}`);
    throw error;
  }
}

function describeInput(text: string): string {
  return text.length > 40
    ? `${JSON.stringify(text.slice(0, 40))}… (${text.length} characters)`
    : JSON.stringify(text);
}

function parseQuantityText(text: string): Quantity {
  if (text.length === 0) throw new QuantityError(FORMAT_WRONG);
  const scanned = scanQuantity(text);
  const { base, exponent } = interpretSuffix(scanned.suffix);
  const { whole, fraction } = scanned;
  const sign = scanned.negative ? -1n : 1n;
  let magnitude: Quantity;
  if (base === 2) {
    // Without a fraction and with few enough digits the int64 fast path takes it; otherwise the
    // inf.Dec path does, and its SetString needs at least one digit (`Ei` alone is not a quantity).
    const fastPathPrecision = 15 - Math.max(whole.length, 1) - Math.trunc((exponent * 3) / 10) - 1;
    const fastPath = fraction.length === 0 && fastPathPrecision >= 0;
    if (!fastPath && !/[0-9]/.test(scanned.numberText)) throw new QuantityError(NUMERIC);
    magnitude = binaryToNano(whole, fraction, exponent);
  } else {
    const digitCount = Math.max(whole.length, 1) + fraction.length;
    const fastScale = int32(exponent - fraction.length);
    if (digitCount <= FAST_PATH_DIGITS && fastScale >= -NANO_DIGITS) {
      // The int64 fast path: exact, no rounding (the scale keeps it on the nano grid).
      magnitude = roundUpToNano(whole + fraction, fastScale);
    } else {
      // The inf.Dec path: SetString needs a digit; the scale is fraction digits minus the exponent.
      if (!/[0-9]/.test(scanned.numberText)) throw new QuantityError(NUMERIC);
      const scale = int32(fraction.length + int32(-exponent));
      magnitude = roundUpToNano(whole + fraction, -scale);
    }
  }
  return { numerator: sign * magnitude.numerator, denominator: magnitude.denominator };
}

function greatestCommonDivisor(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x === 0n ? 1n : x;
}

function normalise(quantity: Quantity): Quantity {
  const divisor = greatestCommonDivisor(quantity.numerator, quantity.denominator);
  return { numerator: quantity.numerator / divisor, denominator: quantity.denominator / divisor };
}

/**
 * `used` as a percentage of `hard`, rounded half-up to one decimal, computed exactly.
 * A zero `hard` with any usage is 100% (the quota is exhausted); zero of zero is 0%.
 */
export function percentOf(used: Quantity, hard: Quantity): number {
  if (hard.numerator === 0n) return used.numerator > 0n ? 100 : 0;
  // percent * 10 = used/hard * 1000, rounded half up
  const scaledNumerator = used.numerator * hard.denominator * 1000n;
  const scaledDenominator = used.denominator * hard.numerator;
  const tenths = (2n * scaledNumerator + scaledDenominator) / (2n * scaledDenominator);
  return Number(tenths) / 10;
}

/** Formats a percentage as the summaries show it: `80%`, `74.9%`. */
export function formatPercent(percent: number): string {
  return `${Number.isInteger(percent) ? percent.toFixed(0) : percent.toFixed(1)}%`;
}

// Exact arithmetic for verdicts: a pod's requests times replicas against what a quota has left.

export const ZERO_QUANTITY: Quantity = { numerator: 0n, denominator: 1n };

export function addQuantities(a: Quantity, b: Quantity): Quantity {
  return normalise({
    numerator: a.numerator * b.denominator + b.numerator * a.denominator,
    denominator: a.denominator * b.denominator,
  });
}

export function subtractQuantities(a: Quantity, b: Quantity): Quantity {
  return addQuantities(a, { numerator: -b.numerator, denominator: b.denominator });
}

export function multiplyQuantity(quantity: Quantity, factor: number): Quantity {
  return normalise({ numerator: quantity.numerator * BigInt(factor), denominator: quantity.denominator });
}

/** Negative when a < b, zero when equal, positive when a > b. */
export function compareQuantities(a: Quantity, b: Quantity): number {
  const difference = a.numerator * b.denominator - b.numerator * a.denominator;
  return difference < 0n ? -1 : difference > 0n ? 1 : 0;
}

export function maxQuantity(a: Quantity, b: Quantity): Quantity {
  return compareQuantities(a, b) >= 0 ? a : b;
}

/** a / b as a quantity (b non-zero). */
export function divideQuantities(a: Quantity, b: Quantity): Quantity {
  const sign = b.numerator < 0n ? -1n : 1n;
  return normalise({
    numerator: sign * a.numerator * b.denominator,
    denominator: sign * a.denominator * b.numerator,
  });
}

const BINARY_FORMATS: Array<[string, bigint]> = [
  ['Ei', 1n << 60n],
  ['Pi', 1n << 50n],
  ['Ti', 1n << 40n],
  ['Gi', 1n << 30n],
  ['Mi', 1n << 20n],
  ['Ki', 1n << 10n],
];

/**
 * A quantity as people write it: whole numbers plainly (`4`), byte counts with the largest exact
 * binary suffix (`512Mi`), fractions in milli units (`800m`) or, failing that, a decimal.
 */
export function formatQuantity(quantity: Quantity, unit: 'bytes' | 'plain' = 'plain'): string {
  const { numerator, denominator } = quantity;
  if (denominator === 1n) {
    if (unit === 'bytes' && numerator !== 0n)
      for (const [suffix, size] of BINARY_FORMATS)
        if (numerator % size === 0n) return `${numerator / size}${suffix}`;
    return numerator.toString();
  }
  if ((numerator * 1000n) % denominator === 0n) return `${(numerator * 1000n) / denominator}m`;
  const micro = (numerator * 1_000_000n) / denominator;
  return `${micro}u`;
}
