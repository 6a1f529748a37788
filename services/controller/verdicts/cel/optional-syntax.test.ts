import { compileCel, toCelInput } from './cel-program';
import { rewriteOptionalSyntax } from './optional-syntax';

// CEL's optional syntax and library (cel-go's OptionalTypes, enabled by Kubernetes), with cel-go's
// documented examples and the real-world policies' shapes (../shared/realworld/policies).

function outcome(expression: string, bindings: Record<string, unknown> = {}) {
  return compileCel(expression)(bindings);
}

function run(expression: string, bindings: Record<string, unknown> = {}): unknown {
  const result = outcome(expression, bindings);
  if (!result.ok) throw new Error(result.message);
  return result.value;
}

const object = toCelInput({
  metadata: { name: 'web', labels: { 'app.kubernetes.io/name': 'web', tier: 'front' } },
  spec: {
    containers: [
      { name: 'app', securityContext: { readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } } },
      { name: 'sidecar', resources: { limits: { cpu: '100m' } } },
    ],
  },
});

describe('the optional library', () => {
  it.each([
    ['optional.of(1).hasValue()', true],
    ['optional.none().hasValue()', false],
    ['optional.of(42).value()', 42n],
    ['optional.of(42).orValue(0)', 42n],
    ['optional.none().orValue(42)', 42n],
    ['optional.none().or(optional.of(42)).value()', 42n],
    ['optional.of(1).or(optional.of(2)).value()', 1n],
    ['optional.ofNonZeroValue(0).hasValue()', false],
    ["optional.ofNonZeroValue('').hasValue()", false],
    ['optional.ofNonZeroValue([]).hasValue()', false],
    ['optional.ofNonZeroValue([1]).hasValue()', true],
    ['optional.none() == optional.none()', true],
    ['optional.of(1) == optional.of(1)', true],
    ['optional.of(1) == optional.none()', false],
  ])('%s', (expression, expected) => {
    expect(run(expression)).toEqual(expected);
  });

  it('value() of none is an error, not a value', () => {
    expect(outcome('optional.none().value()')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/optional\.none\(\) dereference/),
    });
  });
});

describe('optional syntax', () => {
  it.each([
    ["{'k': 'v'}.?k.hasValue()", true],
    ["{'k': 'v'}.?x.hasValue()", false],
    ["{'k': 'v'}.?x.orValue('fallback')", 'fallback'],
    ["{'k': {'k2': 'v'}}.?k.k2.value()", 'v'],
    // Selection after an optional is optional too (cel-go): absent → none, not an error.
    ["{'k': {}}.?k.k2.hasValue()", false],
    ["{'k': 'v'}[?'k'].value()", 'v'],
    ["{'k': 'v'}[?'x'].hasValue()", false],
    ['[1, 2][?1].value()', 2n],
    ['[1][?3].hasValue()', false],
    ['[?optional.none(), ?optional.of(1), 2]', [1n, 2n]],
    ["{?'k': optional.none(), 'k2': 'v2'}", { k2: 'v2' }],
    ["{?'k': optional.of('v'), 'k2': 'v2'}", { k: 'v', k2: 'v2' }],
    // Optionals as plain values keep their meaning inside literals.
    ['[optional.none()][0].hasValue()', false],
    ["optional.of({'a': 1}).?a.value()", 1n],
    ['optional.none().?a.hasValue()', false],
  ])('%s', (expression, expected) => {
    expect(run(expression)).toEqual(expected);
  });

  it.each([
    ["object.metadata.?labels[?'app.kubernetes.io/name'].orValue('') != ''", true],
    ["object.metadata.?annotations[?'kubernetes.io/ingress.class'].orValue('') in ['nginx']", false],
    [
      'object.spec.containers.all(container, container.?securityContext.?readOnlyRootFilesystem.orValue(false) == true)',
      false,
    ],
    [
      "object.spec.containers[0].?securityContext.?capabilities.?drop.orValue([]).exists(c, c == 'ALL')",
      true,
    ],
    ['object.spec.containers.exists(c, c.?resources.?limits.?cpu.hasValue())', true],
    ['object.spec.containers + object.spec.?initContainers.orValue([])', null],
    ['!object.spec.?affinity.?nodeAffinity.hasValue()', true],
    ["object.spec.?volumes.orValue([]).exists(v, v.?hostPath.?path.orValue('') == '/')", false],
  ])('as policies use it: %s', (expression, expected) => {
    const value = run(expression, { object });
    if (expected === null) expect(Array.isArray(value) && value.length).toBe(2);
    else expect(value).toBe(expected);
  });

  it('leaves conditionals, strings and comments as they are', () => {
    for (const expression of [
      'true ? 1 : 2',
      '[1, 2].exists(x, x > 1 ? true : false)',
      "{'a': true ? 1 : 2}",
      "'a.?b' + \"[?c]\" + r'{?d: e}'",
      'x // what about .?y\n',
    ])
      expect(rewriteOptionalSyntax(expression)).toBe(expression);
    expect(run("{'a': true ? 1 : 2}.a")).toBe(1n);
    expect(run("'a.?b'")).toBe('a.?b');
  });

  it('a plain field on an absent key is still an error (only `.?` makes it optional)', () => {
    expect(outcome("{'k': 'v'}.x.hasValue()").ok).toBe(false);
  });

  it('optional syntax it cannot place (message literals) does not compile and is reported unsupported', () => {
    expect(outcome('Msg{?field: optional.none()}')).toMatchObject({ ok: false, unsupported: true });
  });
});
