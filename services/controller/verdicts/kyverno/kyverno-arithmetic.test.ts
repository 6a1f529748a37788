import { queryJmesPath } from './kyverno-jmespath';
import { KyvernoRuleError } from './kyverno-errors';
import { canonicalQuantity, goDurationString } from './kyverno-arithmetic';

// Kyverno's JMESPath arithmetic on numbers, quantities and durations (kyverno-arithmetic.ts).

const requests = {
  containers: [
    { resources: { requests: { memory: '256Mi', cpu: '250m' } } },
    { resources: { requests: { memory: '768Mi', cpu: '1' } } },
  ],
};

describe("Kyverno's JMESPath arithmetic", () => {
  it('sums quantities as quantities, keeping binary suffixes where exact', () => {
    expect(queryJmesPath('sum(containers[].resources.requests.memory)', requests)).toBe('1Gi');
    expect(queryJmesPath('sum(containers[].resources.requests.cpu)', requests)).toBe('1250m');
    expect(queryJmesPath("sum(['2Ki', '5'])", {})).toBe('2053');
    expect(queryJmesPath('sum([`1`, `2.5`])', {})).toBe(3.5);
  });

  it('sums durations as Go durations', () => {
    expect(queryJmesPath("sum(['1h', '90s'])", {})).toBe('1h1m30s');
    // `45m` reads as a quantity (45 milli-units) before it can read as a duration.
    expect(() => queryJmesPath("sum(['90s', '45m'])", {})).toThrow(/mismatch/);
  });

  it('refuses to mix numbers, quantities and durations, and an empty sum', () => {
    expect(() => queryJmesPath("sum([`1`, '1Gi'])", {})).toThrow(KyvernoRuleError);
    expect(() => queryJmesPath("sum(['1Gi', '10s'])", {})).toThrow(KyvernoRuleError);
    expect(() => queryJmesPath('sum(`[]`)', {})).toThrow(/at least one element/);
  });

  it('divides a quantity by a quantity into a number, by a number into a quantity', () => {
    expect(queryJmesPath("divide('3Gi', '512Mi')", {})).toBe(6);
    expect(queryJmesPath("divide('750m', '3')", {})).toBe(0.25);
    expect(queryJmesPath("divide('6Gi', `4`)", {})).toBe('1536Mi');
    // Rounded toward zero at the operands' scale: 10 / 3 in whole units.
    expect(queryJmesPath("divide('10', `3`)", {})).toBe('3');
    expect(queryJmesPath("divide('1', `4`)", {})).toBe('0');
    expect(queryJmesPath("divide('1500m', `2`)", {})).toBe('750m');
  });

  it('divides durations, and rejects zero divisors and mixed types', () => {
    expect(queryJmesPath("divide('1h', '900s')", {})).toBe(4);
    expect(queryJmesPath("divide('1h', `8`)", {})).toBe('7m30s');
    expect(() => queryJmesPath("divide('1Gi', '0')", {})).toThrow(/zero/);
    expect(() => queryJmesPath('divide(`1`, `0`)', {})).toThrow(/zero/);
    expect(() => queryJmesPath("divide('1h', '2Gi')", {})).toThrow(/mismatch/);
    expect(() => queryJmesPath("divide(`4`, '2Gi')", {})).toThrow(/mismatch/);
  });

  it('adds, subtracts, multiplies and takes the modulo by type', () => {
    expect(queryJmesPath("add('1Gi', '512Mi')", {})).toBe('1536Mi');
    expect(queryJmesPath("subtract('2', '500m')", {})).toBe('1500m');
    expect(queryJmesPath("multiply(`3`, '200m')", {})).toBe('600m');
    expect(queryJmesPath("multiply('20s', `4`)", {})).toBe('1m20s');
    expect(queryJmesPath("modulo('10', '4')", {})).toBe('2');
    expect(queryJmesPath('modulo(`10`, `4`)', {})).toBe(2);
    expect(() => queryJmesPath('modulo(`2.5`, `2`)', {})).toThrow(/non-integer/);
  });

  it('spells results as apimachinery and Go do', () => {
    expect(canonicalQuantity({ numerator: 3000n, denominator: 1n }, false)).toBe('3k');
    expect(canonicalQuantity({ numerator: 1n, denominator: 3n }, false)).toBe('333333334n');
    expect(goDurationString(3_723e9)).toBe('1h2m3s');
    expect(goDurationString(1.5e9)).toBe('1.5s');
    expect(goDurationString(2.5e6)).toBe('2.5ms');
  });
});
