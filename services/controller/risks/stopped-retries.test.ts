import { StoppedEvaluationRetries } from './stopped-retries';

// A workload whose evaluation the guard stopped at its deadline is evaluated again later, a bounded
// number of times, further apart each time; a complete evaluation ends its retries.

describe('retries of evaluations stopped at the deadline', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('retries a stopped workload later, further apart, at most the given number of times', () => {
    const retried: string[] = [];
    const retries = new StoppedEvaluationRetries((key) => retried.push(key), 2, 1_000);
    retries.evaluated('shop/web', true);
    expect(retries.scheduled).toBe(1);
    jest.advanceTimersByTime(999);
    expect(retried).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(retried).toEqual(['shop/web']);
    expect(retries.scheduled).toBe(0);

    // Stopped again: the second retry waits twice as long.
    retries.evaluated('shop/web', true);
    jest.advanceTimersByTime(1_999);
    expect(retried).toEqual(['shop/web']);
    jest.advanceTimersByTime(1);
    expect(retried).toEqual(['shop/web', 'shop/web']);

    // Stopped a third time: its retries are used up, its answer is kept.
    retries.evaluated('shop/web', true);
    expect(retries.scheduled).toBe(0);
    jest.advanceTimersByTime(60_000);
    expect(retried).toHaveLength(2);
  });

  it('does nothing for a complete evaluation, and a complete one resets the count', () => {
    const retried: string[] = [];
    const retries = new StoppedEvaluationRetries((key) => retried.push(key), 1, 10);
    retries.evaluated('shop/web', false);
    expect(retries.scheduled).toBe(0);
    retries.evaluated('shop/web', true);
    jest.advanceTimersByTime(10);
    retries.evaluated('shop/web', false);
    retries.evaluated('shop/web', true);
    expect(retries.scheduled).toBe(1);
    jest.advanceTimersByTime(10);
    expect(retried).toEqual(['shop/web', 'shop/web']);
  });

  it('forgets a removed workload and stops every timer', () => {
    const retried: string[] = [];
    const retries = new StoppedEvaluationRetries((key) => retried.push(key), 3, 10);
    retries.evaluated('shop/web', true);
    retries.evaluated('shop/api', true);
    retries.forget('shop/web');
    expect(retries.scheduled).toBe(1);
    retries.stop();
    jest.advanceTimersByTime(1_000);
    expect(retried).toEqual([]);
  });
});
