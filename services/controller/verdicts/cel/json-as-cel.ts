import { celList, celMap, type CelValue } from '@bufbuild/cel';
import type { EvaluationGuard } from '../guard/evaluation-guard';

// JSON (numbers as doubles) as CEL input (whole numbers as ints), converted as CEL reads it. An
// admission check's CEL policies read a few fields of the admitted object (its labels, its
// containers' images), but converting the whole object up front built a Map for every nested object
// of a Deployment on every check: about an eighth of what the controller allocated per review
// (docs/benchmarks.md, "The controller's tail at 16 clients"). A JSON object becomes a CEL map over
// a Map whose entries are converted on first read and kept; a JSON array becomes a CEL list of its
// converted elements (an element that is an object is itself converted on first read). What CEL
// sees is the same: the same keys in the same order (`Object.keys`), the same size, the same values.

/** One JSON value as CEL input; objects and their contents are converted when first read. */
export function jsonAsCel(value: unknown, guard?: EvaluationGuard): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (typeof value !== 'object' || value === null) return value;
  guard?.checkpoint();
  if (Array.isArray(value)) {
    // Index loop, no closure per element.
    const items: unknown[] = [];
    for (let position = 0; position < value.length; position++) items.push(jsonAsCel(value[position], guard));
    return celList(items as CelValue[]);
  }
  return celMap(new JsonObjectAsMap(value as Record<string, unknown>, guard) as Map<string, CelValue>);
}

/**
 * A JSON object read as a `Map` by @bufbuild/cel's native CEL map (which only calls `get`, `has`,
 * `size`, `keys`, `values`, `entries` and `forEach`): each field is converted on its first read and
 * kept in the Map itself. The object is not changed while CEL reads it (CEL input is read only, and
 * the admitted object is not modified once parsed; defaulting works on a copy).
 */
class JsonObjectAsMap extends Map<string, unknown> {
  private fieldNames: string[] | undefined;

  constructor(
    private readonly source: Record<string, unknown>,
    private readonly guard: EvaluationGuard | undefined,
  ) {
    super();
  }

  private names(): string[] {
    this.fieldNames ??= Object.keys(this.source);
    return this.fieldNames;
  }

  override get(key: string): unknown {
    const converted = super.get(key);
    if (converted !== undefined || typeof key !== 'string' || !Object.hasOwn(this.source, key))
      return converted;
    const value = jsonAsCel(this.source[key], this.guard);
    super.set(key, value);
    return value;
  }

  override has(key: string): boolean {
    return typeof key === 'string' && Object.hasOwn(this.source, key);
  }

  override get size(): number {
    return this.names().length;
  }

  override keys(): MapIterator<string> {
    return this.names().values();
  }

  override *values(): MapIterator<unknown> {
    for (const name of this.names()) yield this.get(name);
  }

  override *entries(): MapIterator<[string, unknown]> {
    for (const name of this.names()) yield [name, this.get(name)];
  }

  override [Symbol.iterator](): MapIterator<[string, unknown]> {
    return this.entries();
  }

  override forEach(
    callback: (value: unknown, key: string, map: Map<string, unknown>) => void,
    thisArgument?: unknown,
  ): void {
    const names = this.names();
    for (let position = 0; position < names.length; position++)
      callback.call(thisArgument, this.get(names[position]), names[position], this);
  }
}
