import { tests as conformance } from '@bufbuild/cel-spec/testdata/conformance.js';
import type { SerializedIncrementalTestSuite } from '@bufbuild/cel-spec/testdata/tests.js';
import { compileCel } from './cel-program';

// The CEL conformance suite (cel-spec, shipped by @bufbuild/cel-spec), run through the environment
// admission policies use (standard library + strings + the Kubernetes extensions here), for the
// sections policies rely on: tests without bindings or proto messages whose expected value is a
// scalar. The extensions must not break the standard library they sit on.

const SECTIONS = [
  'basic',
  'comparisons',
  'logic',
  'integer_math',
  'fp_math',
  'string',
  'lists',
  'macros',
  'string_ext',
  'conversions',
];

interface ScalarCase {
  name: string;
  expr: string;
  expected: unknown;
}

function expectedScalar(value: Record<string, unknown>): { ok: true; value: unknown } | { ok: false } {
  if ('int64Value' in value) return { ok: true, value: BigInt(String(value.int64Value)) };
  if ('stringValue' in value) return { ok: true, value: value.stringValue };
  if ('boolValue' in value) return { ok: true, value: value.boolValue };
  if ('doubleValue' in value && typeof value.doubleValue === 'number')
    return { ok: true, value: value.doubleValue };
  if ('nullValue' in value) return { ok: true, value: null };
  return { ok: false };
}

function casesOf(suite: SerializedIncrementalTestSuite, path: string[] = []): ScalarCase[] {
  const own = (suite.tests ?? []).flatMap((test): ScalarCase[] => {
    const original = test.original as Record<string, unknown>;
    if (original.bindings || original.container || original.disableMacros || original.checkOnly) return [];
    if (!original.value || typeof original.value !== 'object') return [];
    const expected = expectedScalar(original.value as Record<string, unknown>);
    if (!expected.ok) return [];
    return [
      {
        name: [...path, String(original.name ?? test.original.expr)].join('/'),
        expr: test.original.expr,
        expected: expected.value,
      },
    ];
  });
  return [...own, ...(suite.suites ?? []).flatMap((child) => casesOf(child, [...path, child.name]))];
}

const cases = (conformance.suites ?? [])
  .filter((suite) => SECTIONS.includes(suite.name))
  .flatMap((suite) => casesOf(suite, [suite.name]));

describe('CEL conformance (cel-spec) through the admission-policy environment', () => {
  it('has cases for every section', () => {
    expect(cases.length).toBeGreaterThan(500);
  });

  it('passes them', () => {
    const failures = cases.filter((test) => {
      const result = compileCel(test.expr)({});
      if (!result.ok) return true;
      if (typeof test.expected === 'number' && Number.isNaN(test.expected))
        return !Number.isNaN(result.value);
      return result.value !== test.expected;
    });
    expect(failures.map((test) => test.name)).toEqual([]);
  });
});
