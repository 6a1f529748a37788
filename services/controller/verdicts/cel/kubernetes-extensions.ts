import {
  celFunc,
  celList,
  celMap,
  celMethod,
  CelScalar,
  listType,
  type CelFunc,
  type CelValue,
} from '@bufbuild/cel';
import {
  addQuantities,
  compareQuantities,
  parseQuantity,
  subtractQuantities,
  type Quantity,
} from '../../../model/quantity';
import { RE2JS } from 're2js';

// The Kubernetes CEL libraries admission policies use, on top of @bufbuild/cel's standard library
// and its strings extension: quantity, url, regex (find/findAll) and the list functions
// (isSorted, sum, min, max, indexOf, lastIndexOf). The library has no opaque types for JavaScript,
// so a quantity or URL is a string in a canonical form only these functions produce; two equal
// quantities (`1`, `1000m`) therefore compare equal with `==`, as Kubernetes' do. ip and cidr are in
// network-extensions.ts. Not implemented (an expression using them is `unknown`): semver, format,
// authorizer, two-variable comprehensions.

const QUANTITY_PREFIX = '\u0000quantity:';
const URL_PREFIX = '\u0000url:';

function toQuantityValue(quantity: Quantity): string {
  return `${QUANTITY_PREFIX}${quantity.numerator}/${quantity.denominator}`;
}

function fromQuantityValue(value: string): Quantity {
  if (!value.startsWith(QUANTITY_PREFIX)) throw new Error(`${JSON.stringify(value)} is not a quantity`);
  const [numerator, denominator] = value.slice(QUANTITY_PREFIX.length).split('/');
  return { numerator: BigInt(numerator), denominator: BigInt(denominator) };
}

function isQuantityText(value: string): boolean {
  try {
    parseQuantity(value);
    return true;
  } catch {
    return false;
  }
}

function quantityFunctions(): CelFunc[] {
  const S = CelScalar.STRING;
  const compare = (a: string, b: string) => compareQuantities(fromQuantityValue(a), fromQuantityValue(b));
  const integer = (value: bigint): Quantity => ({ numerator: value, denominator: 1n });
  return [
    celFunc('quantity', [S], S, (text) => toQuantityValue(parseQuantity(text))),
    celFunc('isQuantity', [S], CelScalar.BOOL, isQuantityText),
    celMethod('isGreaterThan', S, [S], CelScalar.BOOL, function (other) {
      return compare(this, other) > 0;
    }),
    celMethod('isLessThan', S, [S], CelScalar.BOOL, function (other) {
      return compare(this, other) < 0;
    }),
    celMethod('compareTo', S, [S], CelScalar.INT, function (other) {
      return BigInt(compare(this, other));
    }),
    celMethod('add', S, [S], S, function (other) {
      return toQuantityValue(addQuantities(fromQuantityValue(this), fromQuantityValue(other)));
    }),
    celMethod('add', S, [CelScalar.INT], S, function (other) {
      return toQuantityValue(addQuantities(fromQuantityValue(this), integer(other)));
    }),
    celMethod('sub', S, [S], S, function (other) {
      return toQuantityValue(subtractQuantities(fromQuantityValue(this), fromQuantityValue(other)));
    }),
    celMethod('sub', S, [CelScalar.INT], S, function (other) {
      return toQuantityValue(subtractQuantities(fromQuantityValue(this), integer(other)));
    }),
    celMethod('sign', S, [], CelScalar.INT, function () {
      return BigInt(compareQuantities(fromQuantityValue(this), integer(0n)));
    }),
    celMethod('isInteger', S, [], CelScalar.BOOL, function () {
      return fromQuantityValue(this).denominator === 1n;
    }),
    celMethod('asInteger', S, [], CelScalar.INT, function () {
      const quantity = fromQuantityValue(this);
      if (quantity.denominator !== 1n) throw new Error('quantity is not an integer');
      return quantity.numerator;
    }),
    celMethod('asApproximateFloat', S, [], CelScalar.DOUBLE, function () {
      const quantity = fromQuantityValue(this);
      return Number(quantity.numerator) / Number(quantity.denominator);
    }),
  ];
}

function parseUrl(value: string): URL {
  if (!value.startsWith(URL_PREFIX)) throw new Error(`${JSON.stringify(value)} is not a URL`);
  return new URL(value.slice(URL_PREFIX.length));
}

function urlFunctions(): CelFunc[] {
  const S = CelScalar.STRING;
  const isUrl = (text: string) => {
    try {
      new URL(text);
      return text.includes('://') || text.startsWith('/');
    } catch {
      return false;
    }
  };
  return [
    celFunc('url', [S], S, (text) => {
      if (!isUrl(text)) throw new Error(`${JSON.stringify(text)} is not a URL`);
      return `${URL_PREFIX}${text}`;
    }),
    celFunc('isURL', [S], CelScalar.BOOL, isUrl),
    celMethod('getScheme', S, [], S, function () {
      return parseUrl(this).protocol.replace(/:$/, '');
    }),
    celMethod('getHost', S, [], S, function () {
      return parseUrl(this).host;
    }),
    celMethod('getHostname', S, [], S, function () {
      return parseUrl(this).hostname.replace(/^\[|\]$/g, '');
    }),
    celMethod('getPort', S, [], S, function () {
      return parseUrl(this).port;
    }),
    celMethod('getEscapedPath', S, [], S, function () {
      return parseUrl(this).pathname;
    }),
    celMethod('getQuery', S, [], CelScalar.DYN, function () {
      const query = new Map<string, CelValue>();
      const params = parseUrl(this).searchParams;
      for (const key of new Set(params.keys())) query.set(key, celList(params.getAll(key)));
      return celMap(query);
    }),
  ];
}

// RE2 semantics and linear time, as Kubernetes' Go regexp: JavaScript's backtracking RegExp took 30 s
// on `^([a-z0-9]+[._-]?)+(:[a-z0-9._-]+)?$` against 30 `a` and `!`. re2js (the RE2/J port that
// @bufbuild/re2 is cut down from) is used because @bufbuild/re2 only answers whether a string
// matches, not where. Compiled patterns are kept (bounded) since policies reuse a few patterns.
const COMPILED_PATTERNS_KEPT = 256;
const compiledPatterns = new Map<string, RE2JS>();

function compiledPattern(pattern: string): RE2JS {
  const cached = compiledPatterns.get(pattern);
  if (cached) return cached;
  const compiled = RE2JS.compile(pattern);
  if (compiledPatterns.size >= COMPILED_PATTERNS_KEPT)
    compiledPatterns.delete(compiledPatterns.keys().next().value as string);
  compiledPatterns.set(pattern, compiled);
  return compiled;
}

/** Go's Regexp.FindAllString(text, limit): non-overlapping leftmost-first matches; limit < 0: all. */
export function findAllMatches(text: string, pattern: string, limit: number): string[] {
  const matches: string[] = [];
  if (limit === 0) return matches;
  const matcher = compiledPattern(pattern).matcher(text);
  while ((limit < 0 || matches.length < limit) && matcher.find()) matches.push(matcher.group() ?? '');
  return matches;
}

function regexFunctions(): CelFunc[] {
  const S = CelScalar.STRING;
  return [
    celMethod('find', S, [S], S, function (pattern) {
      const matcher = compiledPattern(pattern).matcher(this);
      return matcher.find() ? (matcher.group() ?? '') : '';
    }),
    celMethod('findAll', S, [S], listType(S), function (pattern) {
      return celList(findAllMatches(this, pattern, -1));
    }),
    celMethod('findAll', S, [S, CelScalar.INT], listType(S), function (pattern, limit) {
      return celList(findAllMatches(this, pattern, Number(limit)));
    }),
  ];
}

type Comparable = bigint | number | string;

function comparableItems(list: Iterable<CelValue>): Comparable[] {
  const items: Comparable[] = [];
  for (const item of list) {
    if (typeof item !== 'bigint' && typeof item !== 'number' && typeof item !== 'string')
      throw new Error('list items must be numbers or strings');
    items.push(item);
  }
  return items;
}

function listFunctions(): CelFunc[] {
  const L = listType(CelScalar.DYN);
  const extreme = (items: Comparable[], pick: (a: Comparable, b: Comparable) => boolean) => {
    if (items.length === 0) throw new Error('min/max of an empty list');
    return items.reduce((best, item) => (pick(item, best) ? item : best));
  };
  return [
    celMethod('isSorted', L, [], CelScalar.BOOL, function () {
      const items = comparableItems(this);
      return items.every((item, index) => index === 0 || items[index - 1] <= item);
    }),
    celMethod('sum', L, [], CelScalar.DYN, function () {
      const items = comparableItems(this);
      if (items.every((item) => typeof item === 'bigint'))
        return items.reduce<bigint>((total, item) => total + (item as bigint), 0n);
      return items.reduce<number>((total, item) => total + Number(item), 0);
    }),
    celMethod('min', L, [], CelScalar.DYN, function () {
      return extreme(comparableItems(this), (a, b) => a < b);
    }),
    celMethod('max', L, [], CelScalar.DYN, function () {
      return extreme(comparableItems(this), (a, b) => a > b);
    }),
    celMethod('indexOf', L, [CelScalar.DYN], CelScalar.INT, function (value) {
      return BigInt([...this].findIndex((item) => item === value));
    }),
    celMethod('lastIndexOf', L, [CelScalar.DYN], CelScalar.INT, function (value) {
      const items = [...this];
      for (let index = items.length - 1; index >= 0; index--)
        if (items[index] === value) return BigInt(index);
      return -1n;
    }),
  ];
}

export const KUBERNETES_CEL_FUNCTIONS: readonly CelFunc[] = [
  ...quantityFunctions(),
  ...urlFunctions(),
  ...regexFunctions(),
  ...listFunctions(),
];
