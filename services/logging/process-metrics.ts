import { collectDefaultMetrics, type Registry } from 'prom-client';

/**
 * How often the event-loop delay histogram samples. prom-client's default (10 ms) wakes an idle
 * process 100 times a second, which was most of what the controller and webhook spent at rest (issue
 * 33: 2-4 ms of CPU per second each). At 100 ms every hold of the loop longer than the verdicts'
 * 100 ms bound is still recorded in full; shorter holds are sampled, as any histogram samples.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/** Node's process metrics (CPU, memory, GC, event-loop delay) in `registry`, sampled for a process at rest. */
export function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
}
