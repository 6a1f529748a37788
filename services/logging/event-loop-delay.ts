import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks';
import { Gauge, type Registry } from 'prom-client';

// prom-client's event-loop delay histogram samples on a timer that runs for the life of the process:
// at 100 ms it woke each idle process 10 times a second, and each wake-up of a process that had slept
// cost it about 90 µs (0.9 ms of CPU per second each, about two thirds of what the pair spent at rest;
// docs/benchmarks.md, issue 33). Delay only exists while the loop has work, so this monitor samples
// while the process works and stops once it rests: the same seven gauges, the same 100 ms sampling
// under load, no timer at rest.

/** Sampling interval while the process works (the value prom-client was given before). */
export const EVENT_LOOP_SAMPLE_MS = 100;
/** How long the loop must rest (no request, no change, almost no busy time) before sampling stops. */
export const REST_AFTER_MS = 5_000;
/**
 * Busy share of the loop over a rest check above which sampling continues without a noted activity
 * (a long policy sweep, a watch burst): the sampler's own timer costs far less than this.
 */
export const BUSY_UTILIZATION = 0.02;

/** What the monitor needs of Node's interval histogram (perf_hooks), so tests can drive it. */
export interface DelayHistogram {
  enable(): boolean;
  disable(): boolean;
  reset(): void;
  readonly count: number;
  readonly min: number;
  readonly max: number;
  readonly mean: number;
  readonly stddev: number;
  percentile(percentile: number): number;
}

export interface EventLoopDelayClock {
  /** Runs `callback` once after `ms`, never keeping the process alive for it. */
  schedule(callback: () => void, ms: number): { cancel(): void };
  /** The loop's busy share since the previous call (the first call: since start). */
  utilizationSinceLastCall(): number;
}

export interface EventLoopDelayMonitor {
  /** Called where work arrives (a request, a watched change): starts sampling if it had stopped. */
  noteActivity(): void;
  /** Whether the histogram samples right now. */
  isSampling(): boolean;
  /** Stops sampling and the rest check for good (tests, shutdown). */
  stop(): void;
}

function nodeClock(): EventLoopDelayClock {
  let mark: EventLoopUtilization = performance.eventLoopUtilization();
  return {
    schedule(callback, ms) {
      const timer = setTimeout(callback, ms);
      timer.unref();
      return { cancel: () => clearTimeout(timer) };
    },
    utilizationSinceLastCall() {
      const now = performance.eventLoopUtilization();
      const since = performance.eventLoopUtilization(now, mark);
      mark = now;
      return since.utilization;
    },
  };
}

// prom-client's names and help texts: dashboards built on its default metrics keep working.
const GAUGES = [
  ['nodejs_eventloop_lag_min_seconds', 'The minimum recorded event loop delay.'],
  ['nodejs_eventloop_lag_max_seconds', 'The maximum recorded event loop delay.'],
  ['nodejs_eventloop_lag_mean_seconds', 'The mean of the recorded event loop delays.'],
  ['nodejs_eventloop_lag_stddev_seconds', 'The standard deviation of the recorded event loop delays.'],
  ['nodejs_eventloop_lag_p50_seconds', 'The 50th percentile of the recorded event loop delays.'],
  ['nodejs_eventloop_lag_p90_seconds', 'The 90th percentile of the recorded event loop delays.'],
  ['nodejs_eventloop_lag_p99_seconds', 'The 99th percentile of the recorded event loop delays.'],
] as const;

export type EventLoopDelayGaugeName = (typeof GAUGES)[number][0];
export const EVENT_LOOP_DELAY_GAUGE_NAMES: readonly EventLoopDelayGaugeName[] = GAUGES.map(([name]) => name);

/** The histogram's figures in seconds; all 0 when nothing was sampled (the process rested). */
function figuresOf(histogram: DelayHistogram): Record<EventLoopDelayGaugeName, number> {
  const empty = histogram.count === 0;
  const seconds = (nanoseconds: number) => (empty ? 0 : nanoseconds / 1e9);
  return {
    nodejs_eventloop_lag_min_seconds: seconds(histogram.min),
    nodejs_eventloop_lag_max_seconds: seconds(histogram.max),
    nodejs_eventloop_lag_mean_seconds: seconds(histogram.mean),
    nodejs_eventloop_lag_stddev_seconds: seconds(histogram.stddev),
    nodejs_eventloop_lag_p50_seconds: seconds(histogram.percentile(50)),
    nodejs_eventloop_lag_p90_seconds: seconds(histogram.percentile(90)),
    nodejs_eventloop_lag_p99_seconds: seconds(histogram.percentile(99)),
  };
}

/**
 * Registers the event-loop delay gauges in `registry`, sampled only while the process works. Each
 * scrape reads the figures since the previous one and starts a new window, as prom-client did.
 */
export function monitorEventLoopDelayWhileWorking(
  registry: Registry,
  dependencies: { histogram?: DelayHistogram; clock?: EventLoopDelayClock } = {},
): EventLoopDelayMonitor {
  const histogram = dependencies.histogram ?? monitorEventLoopDelay({ resolution: EVENT_LOOP_SAMPLE_MS });
  const clock = dependencies.clock ?? nodeClock();
  let sampling = false;
  let stopped = false;
  let activitySinceCheck = false;
  let restCheck: { cancel(): void } | undefined;

  const checkRest = () => {
    restCheck = undefined;
    const busy = clock.utilizationSinceLastCall() > BUSY_UTILIZATION;
    if (activitySinceCheck || busy) {
      activitySinceCheck = false;
      restCheck = clock.schedule(checkRest, REST_AFTER_MS);
      return;
    }
    sampling = false;
    histogram.disable();
  };

  const gauges = new Map<EventLoopDelayGaugeName, Gauge>();
  GAUGES.forEach(([name, help], position) => {
    gauges.set(
      name,
      new Gauge({
        name,
        help,
        registers: [registry],
        // The first gauge reads the window for all seven, then starts the next one.
        ...(position === 0
          ? {
              collect() {
                const figures = figuresOf(histogram);
                for (const [gaugeName, gauge] of gauges) gauge.set(figures[gaugeName]);
                histogram.reset();
              },
            }
          : {}),
      }),
    );
  });

  return {
    noteActivity() {
      if (sampling) {
        activitySinceCheck = true;
        return;
      }
      if (stopped) return;
      sampling = true;
      activitySinceCheck = false;
      histogram.enable();
      clock.utilizationSinceLastCall();
      restCheck = clock.schedule(checkRest, REST_AFTER_MS);
    },
    isSampling: () => sampling,
    stop() {
      stopped = true;
      sampling = false;
      restCheck?.cancel();
      restCheck = undefined;
      histogram.disable();
    },
  };
}
