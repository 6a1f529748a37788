import { withFields } from './with-fields';

// withFields stands in for `{ ...base, ...fields }` on the admission check's path: the copy must be
// the spread's, key for key and in the same order, whatever the objects hold.

function spreadOf(base: object, fields: object): object {
  return { ...base, ...fields };
}

describe('withFields', () => {
  it.each([
    ['a new key after the base keys', { a: 1, b: 2 }, { c: 3 }],
    ['a key of both keeps its place with the new value', { a: 1, b: 2, c: 3 }, { b: 20 }],
    ['several new and replaced keys', { x: 'x', y: null }, { z: [1], x: undefined, w: {} }],
    ['integer-like keys, ordered first as in any object', { b: 1, 2: 'two', a: 0 }, { 1: 'one', c: 2 }],
    ['empty objects', {}, {}],
    ['keys holding undefined are kept', { a: undefined }, { b: undefined }],
  ])('copies as a spread does: %s', (_case, base, fields) => {
    const copy = withFields(base, fields);
    expect(Object.keys(copy)).toEqual(Object.keys(spreadOf(base, fields)));
    expect(copy).toStrictEqual(spreadOf(base, fields));
    expect(JSON.stringify(copy)).toBe(JSON.stringify(spreadOf(base, fields)));
  });

  it('keeps an own __proto__ key of JSON data as a key, never as the prototype', () => {
    const base = JSON.parse('{"__proto__": {"polluted": true}, "kept": 1}') as object;
    const fields = JSON.parse('{"__proto__": {"replaced": true}}') as object;
    const copy = withFields(base, fields) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(copy.polluted).toBeUndefined();
    expect(Object.keys(copy)).toEqual(['__proto__', 'kept']);
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"replaced":true},"kept":1}');
    expect(JSON.stringify(copy)).toBe(JSON.stringify(spreadOf(base, fields)));
  });

  it('reads getters as a spread does and copies their values, and leaves both objects alone', () => {
    let reads = 0;
    const base = Object.defineProperty({ plain: 1 }, 'computed', {
      get: () => ++reads,
      enumerable: true,
    });
    const fields = { added: true };
    const copy = withFields(base, fields) as Record<string, unknown>;
    expect(reads).toBe(1);
    expect(copy).toEqual({ plain: 1, computed: 1, added: true });
    expect(Object.getOwnPropertyDescriptor(copy, 'computed')).toMatchObject({ value: 1, writable: true });
    expect(Object.keys(base)).toEqual(['plain', 'computed']);
    expect(Object.getOwnPropertyDescriptor(base, 'computed')?.get).toBeDefined();
    expect(fields).toEqual({ added: true });
  });

  it('skips non-enumerable and inherited keys, as a spread does', () => {
    const base = Object.create({ inherited: 1 }) as Record<string, unknown>;
    Object.defineProperty(base, 'hidden', { value: 2, enumerable: false });
    base.own = 3;
    expect(withFields(base, { more: 4 })).toStrictEqual({ own: 3, more: 4 });
    expect(withFields(base, { more: 4 })).toStrictEqual(spreadOf(base, { more: 4 }));
  });
});
