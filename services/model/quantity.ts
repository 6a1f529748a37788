// Exact Kubernetes quantities (apimachinery resource.Quantity): `3200m`, `8Gi`, `1e3`, `1.5`.
// Values are kept as a fraction of BigInts so `3200m` of `4` is exactly 80%, never 79.99999.
// client-node's `quantityToScalar` returns floats for fractional values, so it cannot be used here.

export class QuantityError extends Error {}

export interface Quantity {
  numerator: bigint;
  denominator: bigint;
}

const BINARY_SUFFIXES: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};

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

const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;

// Every admission check parses the same few quota and limit strings (`4`, `8Gi`, `500m`) of the
// namespace's policies and of the object: a bounded memo of parsed values took parsing from about 5%
// of the controller's CPU per distinct review to nothing (docs/benchmarks.md, issue 26). Values are
// frozen, so no caller can alter a shared one; the memo starts over when full.
const PARSED_QUANTITIES_LIMIT = 4096;
const parsedQuantities = new Map<string, Quantity>();

export function parseQuantity(input: string | number): Quantity {
  const value = typeof input === 'number' ? String(input) : input.trim();
  const known = parsedQuantities.get(value);
  if (known !== undefined) return known;
  const parsed = Object.freeze(parseQuantityText(input, value));
  if (parsedQuantities.size >= PARSED_QUANTITIES_LIMIT) parsedQuantities.clear();
  parsedQuantities.set(value, parsed);
  return parsed;
}

function parseQuantityText(input: string | number, value: string): Quantity {
  const match = QUANTITY.exec(value);
  if (!match) throw new QuantityError(`${JSON.stringify(input)} is not a Kubernetes quantity`);
  const [, sign, digits, suffix, exponentText] = match;
  const [whole, fraction = ''] = digits.split('.');
  let numerator = BigInt((whole || '0') + fraction);
  let denominator = 10n ** BigInt(fraction.length);
  if (suffix && suffix in BINARY_SUFFIXES) {
    numerator *= BINARY_SUFFIXES[suffix];
  } else {
    const exponent = exponentText !== undefined ? Number(exponentText) : DECIMAL_EXPONENTS[suffix ?? ''];
    if (Math.abs(exponent) > 100)
      throw new QuantityError(`${JSON.stringify(input)} has an exponent out of range`);
    if (exponent >= 0) numerator *= 10n ** BigInt(exponent);
    else denominator *= 10n ** BigInt(-exponent);
  }
  if (sign === '-') numerator = -numerator;
  return normalise({ numerator, denominator });
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
