import { compileCel } from './cel-program';

// The Kubernetes CEL libraries, with the examples of the Kubernetes CEL documentation.

function run(expression: string, bindings: Record<string, unknown> = {}): unknown {
  const result = compileCel(expression)(bindings);
  if (!result.ok) throw new Error(result.message);
  return result.value;
}

describe('Kubernetes CEL extensions', () => {
  it.each([
    ["quantity('1Gi').isGreaterThan(quantity('512Mi'))", true],
    ["quantity('200m').isLessThan(quantity('1'))", true],
    ["quantity('1') == quantity('1000m')", true],
    ["quantity('500m').add(quantity('500m')) == quantity('1')", true],
    ["quantity('2').sub(1).asInteger()", 1n],
    ["quantity('50k').isInteger()", true],
    ["quantity('1.5').isInteger()", false],
    ["quantity('1.5').asApproximateFloat()", 1.5],
    ["quantity('-3').sign()", -1n],
    ["quantity('1Gi').compareTo(quantity('1G'))", 1n],
    ["isQuantity('1.3G')", true],
    ["isQuantity('1.3Gz')", false],
  ])('quantity: %s', (expression, expected) => {
    expect(run(expression)).toBe(expected);
  });

  it.each([
    ["url('https://example.com:80/').getHost()", 'example.com:80'],
    ["url('https://example.com/path').getScheme()", 'https'],
    ["url('https://[::1]:80/').getHostname()", '::1'],
    ["url('https://example.com:80/').getPort()", '80'],
    ["url('https://example.com/path with spaces/').getEscapedPath()", '/path%20with%20spaces/'],
    ["isURL('https://example.com')", true],
    ["isURL('not a url')", false],
  ])('url: %s', (expression, expected) => {
    expect(run(expression)).toBe(expected);
  });

  it('url: getQuery gives every value of each key', () => {
    expect(run("url('https://example.com/?k=a&k=b&x=1').getQuery()")).toEqual({ k: ['a', 'b'], x: ['1'] });
  });

  it.each([
    ["'abc 123'.find('[0-9]+')", '123'],
    ["'abc'.find('[0-9]+')", ''],
    ["'123 abc 456'.findAll('[0-9]+')", ['123', '456']],
    ["'123 abc 456'.findAll('[0-9]+', 1)", ['123']],
    ['[1, 2, 3].isSorted()', true],
    ["['b', 'a'].isSorted()", false],
    ['[1, 2, 3].sum()', 6n],
    ['[1, 2, 3].min()', 1n],
    ['[1, 2, 3].max()', 3n],
    ['[1, 2, 2, 3].indexOf(2)', 1n],
    ['[1, 2, 2, 3].lastIndexOf(2)', 2n],
  ])('regex and lists: %s', (expression, expected) => {
    expect(run(expression)).toEqual(expected);
  });

  it('reads objects with whole numbers as ints, as the API server types integer fields', () => {
    expect(run('object.spec.replicas + 1', { object: { spec: { replicas: 3n } } })).toBe(4n);
  });

  it('reports functions it does not implement as unsupported, not as a failing object', () => {
    const result = compileCel("semver('1.2.3').major()")({});
    expect(result).toMatchObject({ ok: false, unsupported: true });
  });
});
