import { applyJsonPatch, applyMergePatch, applyPatch } from './patches';
import { compareKubeVersions } from './resource-registry';

describe('applyMergePatch (RFC 7386)', () => {
  test.each([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: ['b'] }, { a: ['c', 'd'] }, { a: ['c', 'd'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: 'b' }, { a: { c: 'd' } }, { a: { c: 'd' } }],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  ])('%j patched with %j is %j', (target, patch, expected) => {
    expect(applyMergePatch(target, patch)).toEqual(expected);
  });
});

describe('applyJsonPatch (RFC 6902)', () => {
  const document = { metadata: { labels: { 'app.kubernetes.io/name': 'x' } }, list: ['a', 'b'] };

  test('add, remove, replace, move, copy and test', () => {
    const result = applyJsonPatch(document, [
      { op: 'test', path: '/list/0', value: 'a' },
      { op: 'add', path: '/list/-', value: 'c' },
      { op: 'add', path: '/list/0', value: 'first' },
      { op: 'remove', path: '/list/1' },
      { op: 'replace', path: '/metadata/labels/app.kubernetes.io~1name', value: 'y' },
      { op: 'copy', from: '/list/0', path: '/copied' },
      { op: 'move', from: '/copied', path: '/moved' },
    ]);
    expect(result).toEqual({
      metadata: { labels: { 'app.kubernetes.io/name': 'y' } },
      list: ['first', 'b', 'c'],
      moved: 'first',
    });
    expect(document.list).toEqual(['a', 'b']);
  });

  test('a failed test or a missing path is a 422; a malformed patch a 400', () => {
    expect(() => applyJsonPatch(document, [{ op: 'test', path: '/list/0', value: 'z' }])).toThrow(
      expect.objectContaining({ code: 422 }),
    );
    expect(() => applyJsonPatch(document, [{ op: 'replace', path: '/nope', value: 1 }])).toThrow(
      expect.objectContaining({ code: 422 }),
    );
    expect(() => applyJsonPatch(document, { op: 'add' })).toThrow(expect.objectContaining({ code: 400 }));
    expect(() => applyPatch(document, 'application/json-patch+json', { metadata: {} })).toThrow(
      expect.objectContaining({ code: 400 }),
    );
    expect(() => applyPatch(document, 'text/plain', {})).toThrow(expect.objectContaining({ code: 415 }));
  });
});

describe('compareKubeVersions', () => {
  test('orders versions as discovery does: GA, beta, alpha, then other strings', () => {
    const versions = [
      'v11alpha2',
      'foo10',
      'v10',
      'v12alpha1',
      'v3beta1',
      'v2',
      'foo1',
      'v1',
      'v10beta3',
      'v11beta2',
    ];
    expect([...versions].sort(compareKubeVersions)).toEqual([
      'v10',
      'v2',
      'v1',
      'v11beta2',
      'v10beta3',
      'v3beta1',
      'v12alpha1',
      'v11alpha2',
      'foo1',
      'foo10',
    ]);
  });
});
