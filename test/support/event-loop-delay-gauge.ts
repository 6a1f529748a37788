import type { Registry } from 'prom-client';

// Reading the event-loop delay sampled while a process works (services/logging/event-loop-delay.ts)
// from a registry, as a scrape does: each read closes a window and starts the next.

/** `nodejs_eventloop_lag_min_seconds` of the window since the previous read; 0 when nothing was sampled. */
export async function eventLoopDelayMinimum(registry: Registry): Promise<number> {
  const text = await registry.metrics();
  const line = text.split('\n').find((entry) => entry.startsWith('nodejs_eventloop_lag_min_seconds '));
  if (line === undefined) throw new Error(`no nodejs_eventloop_lag_min_seconds in:\n${text}`);
  return Number(line.split(' ')[1]);
}

/**
 * The first window with a sample, read every 150 ms for at most 50 reads: a busy machine may hold the
 * process past several 100 ms ticks at once, so a single read after a fixed wait could find none.
 * Returns 0 when no window had one.
 */
export async function firstSampledEventLoopDelay(registry: Registry): Promise<number> {
  for (let read = 0; read < 50; read++) {
    await new Promise((resolve) => setTimeout(resolve, 150));
    const minimum = await eventLoopDelayMinimum(registry);
    if (minimum > 0) return minimum;
  }
  return 0;
}
