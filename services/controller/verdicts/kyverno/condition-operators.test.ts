import { evaluateOperator, UnknownOperator } from './condition-operators';
import { scalarMatches } from './scalar-pattern';
import { NotEvaluable } from './kyverno-errors';
import { resolve } from './kyverno-variables';

// Kyverno's condition operators on resolved keys and values, with the behaviours of
// pkg/engine/variables/operator (v1.19.1) that the documentation's examples rely on.

describe('Kyverno condition operators', () => {
  it.each([
    ['Equals', 'CREATE', 'CREATE', true],
    ['Equals', 'nginx:1.25', 'nginx:*', true],
    ['Equals', '1Gi', '1024Mi', true],
    ['Equals', '1h', '60m', true],
    ['Equals', 3, '3', true],
    ['Equals', null, null, false],
    ['NotEquals', 'BACKGROUND', 'DELETE', true],
    ['NotEquals', 'DELETE', 'DELETE', false],
    ['AnyIn', 'CREATE', ['CREATE', 'UPDATE'], true],
    ['AnyIn', ['a', 'b'], ['b'], true],
    ['AnyIn', ['nginx:latest'], ['*:latest'], true],
    ['AllIn', ['a', 'b'], ['a', 'b', 'c'], true],
    ['AllIn', ['a', 'z'], ['a', 'b'], false],
    ['AnyNotIn', ['a', 'z'], ['a', 'b'], true],
    ['AllNotIn', ['x', 'y'], ['a', 'b'], true],
    ['AllNotIn', ['x', 'a'], ['a', 'b'], false],
    ['AnyIn', 8080, '8000-9000', true],
    ['In', 'a', ['a', 'b'], true],
    ['NotIn', 'c', ['a', 'b'], true],
    ['GreaterThan', 3, 2, true],
    ['GreaterThan', '2Gi', '1Gi', true],
    ['GreaterThanOrEquals', '1.10.0', '1.9.3', true],
    ['LessThan', '30m', '1h', true],
    ['DurationGreaterThan', '2h', '90m', true],
    ['DurationLessThanOrEquals', 3600, '1h', true],
  ])('%s(%p, %p) is %p', (operator, key, value, expected) => {
    expect(evaluateOperator(operator, key, value)).toBe(expected);
  });

  it('operator names are case-insensitive and unknown ones are an error', () => {
    expect(evaluateOperator('anyin', 'a', ['a'])).toBe(true);
    expect(() => evaluateOperator('Matches', 'a', 'a')).toThrow(UnknownOperator);
  });
});

describe('Kyverno scalar patterns, as pkg/engine/pattern compares them', () => {
  it.each([
    ['0', undefined, true],
    ['?*', undefined, false],
    ['>=1h', '90m', true],
    ['!*:latest', 'nginx:latest', false],
    ['runtime/default | localhost/*', 'localhost/custom', true],
    ['runtime/default | localhost/*', 'unconfined', false],
    [1.5, '1.5', true],
    [null, '', true],
    [true, 'true', false],
  ])('%p against %p: %p', (pattern, value, expected) => {
    expect(scalarMatches(pattern, value)).toBe(expected);
  });
});

describe('Kyverno variables Forewarn does not bind', () => {
  it('images and target are unknown, not null', () => {
    const context = { data: { request: { object: {} } }, unbound: [] };
    expect(() => resolve('images.containers.web.tag', context)).toThrow(NotEvaluable);
    expect(() => resolve('target.metadata.name', context)).toThrow(NotEvaluable);
    expect(resolve('request.object.metadata.name', context)).toBeNull();
  });
});
