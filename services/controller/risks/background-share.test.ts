import { IDLE_SHARE, MAX_PAUSE_MS, pauseAfterSlice } from './background-share';

describe('pauseAfterSlice', () => {
  it('gives the background half of an idle loop: a pause as long as the slice', () => {
    expect(pauseAfterSlice(0.5, { activeMs: 0.5, idleMs: 10 })).toBeCloseTo(0.5, 5);
  });

  it('shrinks the share as requests take the loop, down to the longest pause', () => {
    const quarterBusy = pauseAfterSlice(0.5, { activeMs: 0.5 + 3, idleMs: 9 });
    const mostlyBusy = pauseAfterSlice(0.5, { activeMs: 0.5 + 90, idleMs: 10 });
    expect(quarterBusy).toBeCloseTo(0.5 * (1 / (IDLE_SHARE * 0.75) - 1), 5);
    expect(mostlyBusy).toBeCloseTo(0.5 * (1 / (IDLE_SHARE * 0.1) - 1), 5);
    expect(mostlyBusy).toBeGreaterThan(quarterBusy);
    expect(pauseAfterSlice(0.5, { activeMs: 1000, idleMs: 0.01 })).toBe(MAX_PAUSE_MS);
    expect(pauseAfterSlice(0.5, { activeMs: 1000, idleMs: 0 })).toBe(MAX_PAUSE_MS);
  });

  it('does not count the slice itself as the requests’ time', () => {
    // The whole active time is the slice: the loop was otherwise idle.
    expect(pauseAfterSlice(2, { activeMs: 2, idleMs: 2 })).toBeCloseTo(2, 5);
  });

  it('stays finite and non-negative on odd readings', () => {
    for (const loop of [
      { activeMs: 0, idleMs: 0 },
      { activeMs: -1, idleMs: -1 },
      { activeMs: 0.1, idleMs: 0 },
    ]) {
      const pause = pauseAfterSlice(0.5, loop);
      expect(Number.isFinite(pause)).toBe(true);
      expect(pause).toBeGreaterThanOrEqual(0);
      expect(pause).toBeLessThanOrEqual(MAX_PAUSE_MS);
    }
  });
});
