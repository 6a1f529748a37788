// @ts-check
'use strict';

const { PerformanceObserver, monitorEventLoopDelay, constants } = require('node:perf_hooks');

// What holds a bench server's main thread (issue 33, the controller's tail at 16 clients): every
// garbage collection V8 reports (kind and pause) and the event loop's delay, between a start and a
// take. Inside the server process, so the figures are its own main thread's.

/** @type {Record<number, string>} */
const GC_KINDS = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};

/**
 * @typedef {{count: number, totalMs: number, maxMs: number, p99Ms: number}} PauseSummary
 * @typedef {{seconds: number, gc: Record<string, PauseSummary>, loopDelayMs: {p50: number, p99: number, max: number}}} LoopWatchFigures
 */

/** @param {number[]} values */
function pauseSummary(values) {
  const sorted = [...values].sort((left, right) => left - right);
  const round = (/** @type {number} */ value) => Number(value.toFixed(3));
  return {
    count: sorted.length,
    totalMs: round(sorted.reduce((sum, value) => sum + value, 0)),
    maxMs: round(sorted[sorted.length - 1] ?? 0),
    p99Ms: round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0),
  };
}

function createLoopWatch() {
  /** @type {Map<string, number[]>} */
  let pauses = new Map();
  let startedAt = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      // A gc entry's `detail` holds its kind (Node's perf_hooks; not in the DOM's PerformanceEntry type).
      const detail = /** @type {{detail?: {kind?: number}}} */ (/** @type {unknown} */ (entry)).detail ?? {};
      const kind = GC_KINDS[detail.kind ?? -1] ?? `kind ${detail.kind}`;
      const durations = pauses.get(kind) ?? [];
      durations.push(entry.duration);
      pauses.set(kind, durations);
    }
  });
  const delay = monitorEventLoopDelay({ resolution: 1 });
  return {
    start() {
      pauses = new Map();
      startedAt = performance.now();
      observer.observe({ entryTypes: ['gc'] });
      delay.reset();
      delay.enable();
    },
    /** @returns {LoopWatchFigures} */
    take() {
      delay.disable();
      observer.disconnect();
      /** @type {Record<string, PauseSummary>} */
      const gc = {};
      for (const [kind, durations] of pauses) gc[kind] = pauseSummary(durations);
      const ms = (/** @type {number} */ nanoseconds) => Number((nanoseconds / 1e6).toFixed(2));
      return {
        seconds: Number(((performance.now() - startedAt) / 1000).toFixed(2)),
        gc,
        loopDelayMs: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
      };
    },
  };
}

module.exports = { createLoopWatch };
