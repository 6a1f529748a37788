import {
  CalicoSelectorError,
  matchesCalicoSelector,
  parseCalicoSelector,
  selectsOnlyGlobal,
} from './calico-selector';

// Cases from the operator table of Calico's selector documentation (NetworkPolicy reference,
// "Selectors"): each expression against labelled objects, including objects without the label.

const web = { app: 'web', tier: 'frontend', 'team.example.com/owner': 'pay-team' };
const db = { app: 'db' };
const bare = {};
const matches = (expression: string, labels: Record<string, string>) =>
  matchesCalicoSelector(parseCalicoSelector(expression), labels);

describe('Calico selector expressions', () => {
  it.each([
    ["app == 'web'", web, true],
    ["app == 'web'", db, false],
    ["app == 'web'", bare, false],
    ['app == "web"', web, true],
    ["app != 'web'", db, true],
    ["app != 'web'", web, false],
    // `!=` and `not in` match objects without the label; `==` and `in` do not.
    ["app != 'web'", bare, true],
    ["app in {'web', 'db'}", db, true],
    ["app in {'web', 'db'}", bare, false],
    ['app in {}', web, false],
    ["app not in {'web'}", db, true],
    ["app not in {'web'}", web, false],
    ["app not in {'web'}", bare, true],
    ['has(tier)', web, true],
    ['has(tier)', db, false],
    ['!has(tier)', db, true],
    ['!has(tier)', web, false],
    ["tier contains 'ont'", web, true],
    ["tier contains 'ont'", bare, false],
    ["tier starts with 'front'", web, true],
    ["tier starts with 'end'", web, false],
    ["tier ends with 'end'", web, true],
    ["team.example.com/owner starts with 'pay'", web, true],
    ['all()', bare, true],
    ['', bare, true],
    ['   ', db, true],
    ['global()', web, false],
    ['!global()', web, true],
    ["app == 'web' && has(tier)", web, true],
    ["app == 'db' && has(tier)", db, false],
    ["app == 'db' || has(tier)", db, true],
    ["app == 'x' || has(nothing)", web, false],
    ["!(app == 'web')", web, false],
    ["!(app == 'web')", db, true],
    ['!!has(app)', db, true],
  ] as const)('%s on %j → %s', (expression, labels, expected) => {
    expect(matches(expression, labels)).toBe(expected);
  });

  it('binds ! tighter than &&, and && tighter than ||', () => {
    // a || b && c is a || (b && c): true for web through the first operand alone.
    expect(matches("app == 'web' || app == 'db' && has(missing)", web)).toBe(true);
    expect(matches("(app == 'web' || app == 'db') && has(missing)", web)).toBe(false);
    expect(matches("!has(tier) && app == 'db'", db)).toBe(true);
    expect(parseCalicoSelector("a == 'x' || b == 'y' && !has(c)")).toEqual({
      op: 'or',
      operands: [
        { op: '==', key: 'a', value: 'x' },
        {
          op: 'and',
          operands: [
            { op: '==', key: 'b', value: 'y' },
            { op: 'not', operand: { op: 'has', key: 'c' } },
          ],
        },
      ],
    });
  });

  it('reads label keys with prefixes, dots, dashes and underscores, and labels named like keywords', () => {
    expect(parseCalicoSelector("projectcalico.org/name == 'kube-system'")).toEqual({
      op: '==',
      key: 'projectcalico.org/name',
      value: 'kube-system',
    });
    expect(matches("has == 'x'", { has: 'x' })).toBe(true);
    expect(matches("in in {'a'}", { in: 'a' })).toBe(true);
  });

  it.each([
    "app = 'web'",
    'app == web',
    "app == 'web",
    "app == 'web' &&",
    "(app == 'web'",
    "app == 'web')",
    "app in {'a' 'b'}",
    "app not {'a'}",
    "app starts 'a'",
    'has(app',
    'has()',
    "app == 'a' app == 'b'",
    "app ~= 'a'",
    '&& has(a)',
  ])('rejects %s', (expression) => {
    expect(() => parseCalicoSelector(expression)).toThrow(CalicoSelectorError);
  });

  it('knows which selectors can never select a pod', () => {
    expect(selectsOnlyGlobal(parseCalicoSelector('global()'))).toBe(true);
    expect(selectsOnlyGlobal(parseCalicoSelector('global() && has(a)'))).toBe(true);
    expect(selectsOnlyGlobal(parseCalicoSelector('global() || has(a)'))).toBe(false);
    expect(selectsOnlyGlobal(parseCalicoSelector('!global()'))).toBe(false);
  });
});
