import {
  formatLabelSelector,
  LabelSelectorError,
  matchesLabelSelector,
  parseLabelSelector,
  parseLabelSet,
} from './label-selector';

describe('label selectors (apimachinery semantics)', () => {
  const labels = { app: 'web', tier: 'frontend' };

  it('matches everything with an empty selector', () => {
    expect(matchesLabelSelector({}, labels)).toBe(true);
    expect(matchesLabelSelector({}, {})).toBe(true);
  });

  it('ANDs matchLabels and every expression', () => {
    expect(matchesLabelSelector({ matchLabels: { app: 'web' } }, labels)).toBe(true);
    expect(matchesLabelSelector({ matchLabels: { app: 'web', tier: 'backend' } }, labels)).toBe(false);
    expect(
      matchesLabelSelector(
        {
          matchLabels: { app: 'web' },
          matchExpressions: [{ key: 'tier', operator: 'In', values: ['frontend', 'edge'] }],
        },
        labels,
      ),
    ).toBe(true);
  });

  it.each([
    ['In', ['web'], true],
    ['In', ['api'], false],
    ['NotIn', ['api'], true],
    ['NotIn', ['web'], false],
    ['Exists', [], true],
    ['DoesNotExist', [], false],
  ])('evaluates %s %p on a present key', (operator, values, expected) => {
    expect(matchesLabelSelector({ matchExpressions: [{ key: 'app', operator, values }] }, labels)).toBe(
      expected,
    );
  });

  it('matches NotIn and DoesNotExist when the key is absent, not In or Exists', () => {
    const absent = (operator: string, values: string[] = []) =>
      matchesLabelSelector({ matchExpressions: [{ key: 'missing', operator, values }] }, labels);
    expect(absent('NotIn', ['x'])).toBe(true);
    expect(absent('DoesNotExist')).toBe(true);
    expect(absent('In', ['x'])).toBe(false);
    expect(absent('Exists')).toBe(false);
  });

  it('validates untyped selectors the way the API server would', () => {
    expect(parseLabelSelector(null, 'spec.selector')).toEqual({});
    expect(() => parseLabelSelector('app=web', 'spec.selector')).toThrow(LabelSelectorError);
    expect(() => parseLabelSelector({ matchLabels: { app: 1 } }, 'spec.selector')).toThrow(/matchLabels/);
    expect(() => parseLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Near' }] }, 's')).toThrow(
      /operator/,
    );
    expect(() =>
      parseLabelSelector({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }, 's'),
    ).toThrow(/at least one value/);
    expect(() =>
      parseLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, 's'),
    ).toThrow(/takes no values/);
  });

  it('formats selectors as kubectl does', () => {
    expect(
      formatLabelSelector({
        matchLabels: { app: 'web' },
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['a', 'b'] },
          { key: 'legacy', operator: 'DoesNotExist' },
        ],
      }),
    ).toBe('app=web,tier in (a,b),!legacy');
    expect(formatLabelSelector({})).toBe('all pods');
  });

  it('parses label sets from the labels query parameter', () => {
    expect(parseLabelSet('app=web,app.kubernetes.io/name=shop')).toEqual({
      app: 'web',
      'app.kubernetes.io/name': 'shop',
    });
    expect(parseLabelSet('')).toEqual({});
    expect(() => parseLabelSet('app')).toThrow(LabelSelectorError);
    expect(() => parseLabelSet('app=bad value')).toThrow(LabelSelectorError);
  });
});
