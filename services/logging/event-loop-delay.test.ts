import { Registry } from 'prom-client';
import {
  BUSY_UTILIZATION,
  EVENT_LOOP_DELAY_GAUGE_NAMES,
  REST_AFTER_MS,
  monitorEventLoopDelayWhileWorking,
  type DelayHistogram,
  type EventLoopDelayClock,
} from './event-loop-delay';
import { collectProcessMetrics } from './process-metrics';

/** A histogram whose samples the test sets, counting how often it was switched. */
class RecordedHistogram implements DelayHistogram {
  enabled = false;
  switches = 0;
  samples: number[] = [];
  enable() {
    this.switches += this.enabled ? 0 : 1;
    this.enabled = true;
    return true;
  }
  disable() {
    this.switches += this.enabled ? 1 : 0;
    this.enabled = false;
    return true;
  }
  reset() {
    this.samples = [];
  }
  get count() {
    return this.samples.length;
  }
  // Node's empty histogram reads these values: the monitor must not export them.
  get min() {
    return this.samples.length ? Math.min(...this.samples) : 9223372036854776000;
  }
  get max() {
    return this.samples.length ? Math.max(...this.samples) : 0;
  }
  get mean() {
    return this.samples.length ? this.samples.reduce((a, b) => a + b, 0) / this.samples.length : NaN;
  }
  get stddev() {
    return this.samples.length ? 0 : NaN;
  }
  percentile(percentile: number) {
    const sorted = [...this.samples].sort((a, b) => a - b);
    return sorted.length
      ? sorted[Math.min(sorted.length - 1, Math.floor((percentile / 100) * sorted.length))]
      : 0;
  }
}

/** Timers the test fires by hand; the loop's busy share is what the test says. */
class ManualClock implements EventLoopDelayClock {
  pending: Array<{ callback: () => void; ms: number; cancelled: boolean }> = [];
  utilization = 0;
  schedule(callback: () => void, ms: number) {
    const entry = { callback, ms, cancelled: false };
    this.pending.push(entry);
    return { cancel: () => (entry.cancelled = true) };
  }
  utilizationSinceLastCall() {
    return this.utilization;
  }
  live() {
    return this.pending.filter((entry) => !entry.cancelled);
  }
  fireNext() {
    const entry = this.live()[0];
    if (!entry) throw new Error('no timer pending');
    this.pending = this.pending.filter((pending) => pending !== entry);
    entry.callback();
  }
}

async function gaugeValues(registry: Registry): Promise<Record<string, number>> {
  const values: Record<string, number> = {};
  for (const metric of await registry.getMetricsAsJSON()) {
    if (metric.name.startsWith('nodejs_eventloop_lag_')) values[metric.name] = metric.values[0]?.value ?? NaN;
  }
  return values;
}

function setUp() {
  const registry = new Registry();
  const histogram = new RecordedHistogram();
  const clock = new ManualClock();
  const monitor = monitorEventLoopDelayWhileWorking(registry, { histogram, clock });
  return { registry, histogram, clock, monitor };
}

describe('event-loop delay sampled while the process works', () => {
  it('does not sample, and sets no timer, until work arrives', () => {
    const { histogram, clock, monitor } = setUp();
    expect(monitor.isSampling()).toBe(false);
    expect(histogram.enabled).toBe(false);
    expect(clock.live()).toHaveLength(0);
  });

  it('starts sampling on activity and stops after a rest without activity or busy time', () => {
    const { histogram, clock, monitor } = setUp();
    monitor.noteActivity();
    expect(histogram.enabled).toBe(true);
    expect(clock.live().map((entry) => entry.ms)).toEqual([REST_AFTER_MS]);
    clock.fireNext();
    expect(histogram.enabled).toBe(false);
    expect(monitor.isSampling()).toBe(false);
    expect(clock.live()).toHaveLength(0);
  });

  it('keeps sampling while activity is noted between rest checks', () => {
    const { histogram, clock, monitor } = setUp();
    monitor.noteActivity();
    monitor.noteActivity();
    clock.fireNext();
    expect(histogram.enabled).toBe(true);
    expect(clock.live()).toHaveLength(1);
    clock.fireNext();
    expect(histogram.enabled).toBe(false);
    // One timer at a time and one switch each way, however many activities were noted.
    expect(histogram.switches).toBe(2);
  });

  it('keeps sampling while the loop is busy without noted activity (a long sweep)', () => {
    const { histogram, clock, monitor } = setUp();
    monitor.noteActivity();
    clock.utilization = BUSY_UTILIZATION * 2;
    clock.fireNext();
    expect(histogram.enabled).toBe(true);
    clock.utilization = BUSY_UTILIZATION / 2;
    clock.fireNext();
    expect(histogram.enabled).toBe(false);
  });

  it('exports the window in seconds and starts a new one at each scrape; 0 for a window at rest', async () => {
    const { registry, histogram, monitor } = setUp();
    monitor.noteActivity();
    histogram.samples = [100e6, 101e6, 350e6];
    const busy = await gaugeValues(registry);
    expect(Object.keys(busy).sort()).toEqual([...EVENT_LOOP_DELAY_GAUGE_NAMES].sort());
    expect(busy.nodejs_eventloop_lag_min_seconds).toBeCloseTo(0.1);
    expect(busy.nodejs_eventloop_lag_max_seconds).toBeCloseTo(0.35);
    expect(busy.nodejs_eventloop_lag_p50_seconds).toBeCloseTo(0.101);
    expect(histogram.count).toBe(0);
    const rested = await gaugeValues(registry);
    for (const name of EVENT_LOOP_DELAY_GAUGE_NAMES) expect(rested[name]).toBe(0);
  });

  it('stop ends sampling and its timer, and later activity does not start it again', () => {
    const { histogram, clock, monitor } = setUp();
    monitor.noteActivity();
    monitor.stop();
    expect(histogram.enabled).toBe(false);
    expect(clock.live()).toHaveLength(0);
    monitor.noteActivity();
    expect(histogram.enabled).toBe(false);
  });
});

describe('collectProcessMetrics', () => {
  it("exports prom-client's default metrics once each, the delay gauges fed by the working-time monitor", async () => {
    const registry = new Registry();
    const monitor = collectProcessMetrics(registry);
    try {
      const names = (await registry.getMetricsAsJSON()).map((metric) => metric.name);
      expect(new Set(names).size).toBe(names.length);
      for (const name of [
        'process_cpu_seconds_total',
        'process_resident_memory_bytes',
        'nodejs_heap_size_used_bytes',
        'nodejs_gc_duration_seconds',
        'nodejs_eventloop_lag_seconds',
        ...EVENT_LOOP_DELAY_GAUGE_NAMES,
      ])
        expect(names).toContain(name);
      expect(monitor.isSampling()).toBe(false);

      // A real hold of the loop while sampling is recorded: the interval around it is at least as long.
      monitor.noteActivity();
      await new Promise((resolve) => setTimeout(resolve, 150));
      const holdUntil = performance.now() + 200;
      while (performance.now() < holdUntil) {
        // Holding the loop on purpose.
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
      const values = await gaugeValues(registry);
      expect(values.nodejs_eventloop_lag_max_seconds).toBeGreaterThanOrEqual(0.2);
    } finally {
      monitor.stop();
    }
  });
});
