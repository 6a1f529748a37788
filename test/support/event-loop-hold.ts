import { readFileSync } from 'node:fs';
import { coreOversubscription } from './machine-load';
import { blockedOnWaitingIsolateMilliseconds } from '../../services/controller/verdicts/guard/evaluation-isolate';

// How long code held the thread it runs on (for the controller's code: its event loop), measured so
// that a busy machine does not count: the wall time less the time the thread waited for a CPU while
// runnable. What is left is time on a CPU plus time blocked (Atomics.wait on an isolate, a synchronous
// read): both are the code's, and both hold the event loop, except the time it was blocked on an
// isolate that was itself waiting for a CPU (the machine's again; evaluation-isolate.ts counts it). Linux gives the run-queue wait of a thread
// in /proc/thread-self/schedstat (nanoseconds on a CPU, nanoseconds waiting to run, slices); where it
// does not, the wall time is compared with a bound scaled by the load (machine-load.ts).

interface ThreadClock {
  wall: number;
  waitingForCpu: number;
}

function readRunQueueWait(): number | undefined {
  try {
    const fields = readFileSync('/proc/thread-self/schedstat', 'utf8').trim().split(/\s+/);
    const waiting = Number(fields[1]);
    return Number.isFinite(waiting) ? waiting / 1e6 : undefined;
  } catch {
    return undefined;
  }
}

const exact = readRunQueueWait() !== undefined;

function now(): ThreadClock {
  return {
    wall: performance.now(),
    waitingForCpu: (readRunQueueWait() ?? 0) + blockedOnWaitingIsolateMilliseconds(),
  };
}

/** Milliseconds between two readings that the thread was on a CPU or blocked (not waiting for a CPU). */
function heldBetween(before: ThreadClock, after: ThreadClock): number {
  return after.wall - before.wall - (after.waitingForCpu - before.waitingForCpu);
}

/** Runs `work` and returns how long it held this thread (see above). */
export function measureHold<T>(work: () => T): { value: T; heldMilliseconds: number } {
  const before = now();
  const value = work();
  return { value, heldMilliseconds: heldBetween(before, now()) };
}

/**
 * Runnable processes per core the issue's bounds are stated for: load 15 on 2 cores. Beyond it the
 * loop's thread also waits, blocked, for V8's garbage-collection helper threads, which themselves
 * wait for a CPU: that time cannot be told apart from the code's own.
 */
const STATED_OVERSUBSCRIPTION = 7.5;

/**
 * A hold bound stated for a quiet machine: as it is up to the stated load where the run-queue wait
 * is measured (it is taken out of the hold), scaled by the extra oversubscription beyond it; scaled
 * by the whole load where the wait is not measured.
 */
export function holdBoundForThisMachine(quietMilliseconds: number): number {
  return exact
    ? quietMilliseconds * Math.max(1, coreOversubscription() / STATED_OVERSUBSCRIPTION)
    : quietMilliseconds * coreOversubscription();
}

/**
 * The longest hold between two turns of this thread's event loop while `work` runs (probed every
 * 5 ms): how long the event loop was kept from answering anything else.
 */
export async function longestEventLoopHold<T>(
  work: () => Promise<T>,
): Promise<{ value: T; heldMilliseconds: number }> {
  let last = now();
  let longest = 0;
  const probe = setInterval(() => {
    const reading = now();
    longest = Math.max(longest, heldBetween(last, reading));
    last = reading;
  }, 5);
  try {
    const value = await work();
    longest = Math.max(longest, heldBetween(last, now()));
    return { value, heldMilliseconds: longest };
  } finally {
    clearInterval(probe);
  }
}
