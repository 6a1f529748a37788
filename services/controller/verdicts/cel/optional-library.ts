import {
  celFunc,
  celList,
  celMap,
  celMethod,
  CelScalar,
  isCelList,
  isCelMap,
  isCelUint,
  type CelFunc,
  type CelValue,
} from '@bufbuild/cel';
import { MARKERS, OPTIONAL_INDEX, OPTIONAL_SELECT } from './optional-syntax';

// cel-go's optional library as Kubernetes enables it: optional.of / none / ofNonZeroValue,
// hasValue, value, or, orValue, and the operators optional syntax becomes (optional-syntax.ts).
// @bufbuild/cel has no opaque types, so an optional is a map with one key no object can have
// (mapped to a list of zero or one value); only these functions make or read it. Not implemented
// (an expression using them is `unknown`): optMap, optFlatMap, optional.unwrap, `first`/`last`.

const OPTIONAL_KEY = '\u0000optional';
/** An optional element of a list literal or entry of a map literal, until the literal is built. */
const PART_KEY = '\u0000optional part';
const DYN = CelScalar.DYN;

type Optional = { present: true; value: CelValue } | { present: false };

function makeOptional(value?: CelValue): CelValue {
  return celMap(new Map([[OPTIONAL_KEY, value === undefined ? celList([]) : celList([value])]]));
}

function readOptional(value: CelValue): Optional | undefined {
  if (!isCelMap(value) || value.size !== 1) return undefined;
  const content = value.get(OPTIONAL_KEY);
  if (content === undefined || !isCelList(content)) return undefined;
  const inner = content.get(0);
  return inner === undefined ? { present: false } : { present: true, value: inner };
}

function requireOptional(value: CelValue, operation: string): Optional {
  const optional = readOptional(value);
  if (!optional) throw new Error(`no such overload: ${operation} applies to optional values`);
  return optional;
}

function isZero(value: CelValue): boolean {
  if (value === null || value === false || value === '' || value === 0 || value === 0n) return true;
  if (isCelUint(value)) return value.value === 0n;
  if (value instanceof Uint8Array) return value.length === 0;
  if (isCelList(value) || isCelMap(value)) return value.size === 0;
  return false;
}

/** `x.?field` / `x[?key]`: the value when present, none when absent; through an optional `x`. */
function access(target: CelValue, key: CelValue, operation: string): CelValue {
  const optional = readOptional(target);
  if (optional && !optional.present) return makeOptional();
  const container = optional?.present ? optional.value : target;
  if (isCelMap(container)) {
    const mapKey = key as Parameters<typeof container.get>[0];
    return container.has(mapKey) ? makeOptional(container.get(mapKey)) : makeOptional();
  }
  if (isCelList(container) && operation === OPTIONAL_INDEX) {
    const position = typeof key === 'bigint' ? key : isCelUint(key) ? key.value : undefined;
    if (position === undefined) throw new Error('no such overload: list index must be an int');
    const element =
      position >= 0n && position < BigInt(container.size) ? container.get(Number(position)) : undefined;
    return element === undefined ? makeOptional() : makeOptional(element);
  }
  throw new Error(`no such overload: ${operation} on this type`);
}

function part(optional: CelValue): CelValue {
  requireOptional(optional, 'an optional element or entry');
  return celMap(new Map([[PART_KEY, optional]]));
}

/** The present value of an optional part, undefined when absent; the value itself otherwise. */
function partValue(value: CelValue): { keep: boolean; value: CelValue } {
  if (!isCelMap(value) || value.size !== 1 || !value.has(PART_KEY)) return { keep: true, value };
  const optional = requireOptional(value.get(PART_KEY) as CelValue, 'an optional element or entry');
  return optional.present ? { keep: true, value: optional.value } : { keep: false, value };
}

export const OPTIONAL_CEL_FUNCTIONS: CelFunc[] = [
  celFunc('optional.of', [DYN], DYN, (value) => makeOptional(value)),
  celFunc('optional.none', [], DYN, () => makeOptional()),
  celFunc('optional.ofNonZeroValue', [DYN], DYN, (value) =>
    isZero(value) ? makeOptional() : makeOptional(value),
  ),
  celMethod('hasValue', DYN, [], CelScalar.BOOL, function () {
    return requireOptional(this, 'hasValue').present;
  }),
  celMethod('value', DYN, [], DYN, function () {
    const optional = requireOptional(this, 'value');
    if (!optional.present) throw new Error('optional.none() dereference');
    return optional.value;
  }),
  celMethod('orValue', DYN, [DYN], DYN, function (fallback) {
    const optional = requireOptional(this, 'orValue');
    return optional.present ? optional.value : fallback;
  }),
  celMethod('or', DYN, [DYN], DYN, function (other) {
    const optional = requireOptional(this, 'or');
    requireOptional(other, 'or');
    return optional.present ? this : other;
  }),
  celFunc(OPTIONAL_SELECT, [DYN, CelScalar.STRING], DYN, (target, field) =>
    access(target, field, OPTIONAL_SELECT),
  ),
  celFunc(OPTIONAL_INDEX, [DYN, DYN], DYN, (target, key) => access(target, key, OPTIONAL_INDEX)),
  celFunc(MARKERS.element, [DYN], DYN, part),
  celFunc(MARKERS.entry, [DYN], DYN, part),
  celFunc(MARKERS.list, [DYN], DYN, (list) => {
    if (!isCelList(list)) throw new Error('no such overload: optional list');
    const kept: CelValue[] = [];
    for (const element of list) {
      const entry = partValue(element);
      if (entry.keep) kept.push(entry.value);
    }
    return celList(kept);
  }),
  celFunc(MARKERS.map, [DYN], DYN, (map) => {
    if (!isCelMap(map)) throw new Error('no such overload: optional map');
    const kept = new Map<Parameters<typeof map.get>[0], CelValue>();
    for (const [key, value] of map) {
      const entry = partValue(value);
      if (entry.keep) kept.set(key as Parameters<typeof map.get>[0], entry.value);
    }
    return celMap(kept as never);
  }),
];
