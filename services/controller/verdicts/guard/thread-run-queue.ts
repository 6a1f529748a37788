import { readFileSync } from 'node:fs';

// How long this thread (the event loop's, for the guard) has waited for a CPU while runnable, from
// Linux's /proc/thread-self/schedstat (nanoseconds on a CPU, nanoseconds waiting to run, slices).
// Time spent waiting for a CPU is the machine's, not the evaluation's: it does not hold the event
// loop against other requests of this process any more than the machine's load does, so the
// wall-clock backstop leaves it out (evaluation-guard.ts). Read only when an evaluation is long
// (a file read costs microseconds); undefined where the kernel does not say.

const SCHEDSTAT = '/proc/thread-self/schedstat';

let available = true;

/** Milliseconds this thread has waited for a CPU since it started, or undefined where unknown. */
export function runQueueWaitMilliseconds(): number | undefined {
  if (!available) return undefined;
  try {
    const waiting = Number(readFileSync(SCHEDSTAT, 'utf8').split(' ')[1]);
    if (Number.isFinite(waiting)) return waiting / 1e6;
  } catch {
    // Not Linux, or /proc not mounted: the backstop is then wall time alone.
  }
  available = false;
  return undefined;
}
