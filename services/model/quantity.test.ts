import { formatPercent, parseQuantity, percentOf, QuantityError } from './quantity';

describe('Kubernetes quantities', () => {
  it.each([
    ['3200m', 3200n, 1000n],
    ['4', 4n, 1n],
    ['8Gi', 8n * 2n ** 30n, 1n],
    ['1e3', 1000n, 1n],
    ['1.5', 3n, 2n],
    ['500M', 500_000_000n, 1n],
    ['250u', 250n, 1_000_000n],
    ['.5', 1n, 2n],
    ['2E-2', 2n, 100n],
  ])('parses %s exactly', (input, numerator, denominator) => {
    const quantity = parseQuantity(input);
    expect(quantity.numerator * denominator).toBe(numerator * quantity.denominator);
  });

  it.each(['', 'abc', '4 cores', '1Qi', '--1', '1e999'])('rejects %p', (input) => {
    expect(() => parseQuantity(input)).toThrow(QuantityError);
  });

  it('computes percentages exactly, rounding half up to one decimal', () => {
    expect(percentOf(parseQuantity('3200m'), parseQuantity('4'))).toBe(80);
    expect(percentOf(parseQuantity('6Gi'), parseQuantity('8Gi'))).toBe(75);
    expect(percentOf(parseQuantity('749'), parseQuantity('1000'))).toBe(74.9);
    expect(percentOf(parseQuantity('899'), parseQuantity('1000'))).toBe(89.9);
    expect(percentOf(parseQuantity('7680Mi'), parseQuantity('8Gi'))).toBe(93.8);
    expect(percentOf(parseQuantity('1'), parseQuantity('3'))).toBe(33.3);
    expect(percentOf(parseQuantity('2'), parseQuantity('3'))).toBe(66.7);
    expect(percentOf(parseQuantity('1'), parseQuantity('0'))).toBe(100);
    expect(percentOf(parseQuantity('0'), parseQuantity('0'))).toBe(0);
  });

  it('does not drift where floating point would (0.1 + 0.2 style)', () => {
    // 300m of 1000m is exactly 30%; 0.3/1 in floats times 100 is 30.000000000000004.
    expect(percentOf(parseQuantity('0.3'), parseQuantity('1'))).toBe(30);
    expect(percentOf(parseQuantity('100m'), parseQuantity('300m'))).toBe(33.3);
  });

  it('formats whole percentages without a decimal', () => {
    expect(formatPercent(80)).toBe('80%');
    expect(formatPercent(74.9)).toBe('74.9%');
  });
});
