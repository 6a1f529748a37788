import { collectDefaultMetrics, type Registry } from 'prom-client';
import {
  EVENT_LOOP_DELAY_GAUGE_NAMES,
  monitorEventLoopDelayWhileWorking,
  type EventLoopDelayMonitor,
} from './event-loop-delay';

// prom-client has no switch for its event-loop delay histogram alone, and its timer cannot be
// stopped: it is given an interval no process lives to see (its timer does not keep the process
// alive and never fires), and its seven gauges are replaced by the same ones fed by a histogram that
// samples only while the process works (event-loop-delay.ts). `nodejs_eventloop_lag_seconds`, which
// prom-client measures at scrape time without a timer, stays its own.
const NEVER_MS = 2 ** 31 - 1;

/**
 * Node's process metrics (CPU, memory, GC, event-loop delay) in `registry`. The returned monitor's
 * `noteActivity` is to be called where work arrives, so the event-loop delay is sampled then.
 */
export function collectProcessMetrics(registry: Registry): EventLoopDelayMonitor {
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: NEVER_MS });
  for (const name of EVENT_LOOP_DELAY_GAUGE_NAMES) registry.removeSingleMetric(name);
  return monitorEventLoopDelayWhileWorking(registry);
}
