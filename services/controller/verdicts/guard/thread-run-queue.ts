import { readFileSync, readlinkSync } from 'node:fs';

// How long a thread has waited for a CPU while runnable, from Linux's schedstat (nanoseconds on a
// CPU, nanoseconds waiting to run, slices): /proc/thread-self/schedstat for the calling thread (the
// event loop's, for the guard), /proc/self/task/<id>/schedstat for another thread of the process
// (the evaluation isolate's, which the event loop may be blocked on). Time spent waiting for a CPU
// is the machine's, not the evaluation's: it does not hold the event loop against other requests of
// this process any more than the machine's load does, so the wall-clock backstop leaves it out
// (evaluation-guard.ts), and so does a wait on an isolate that was itself waiting for a CPU
// (evaluation-isolate.ts). Read only when an evaluation is long (a file read costs microseconds);
// undefined where the kernel does not say.

const SCHEDSTAT = '/proc/thread-self/schedstat';

let available = true;

function waitingOf(path: string): number | undefined {
  if (!available) return undefined;
  try {
    const waiting = Number(readFileSync(path, 'utf8').split(' ')[1]);
    if (Number.isFinite(waiting)) return waiting / 1e6;
  } catch {
    // Not Linux, or /proc not mounted: the backstop is then wall time alone.
  }
  available = false;
  return undefined;
}

/** Milliseconds this thread has waited for a CPU since it started, or undefined where unknown. */
export function runQueueWaitMilliseconds(): number | undefined {
  return waitingOf(SCHEDSTAT);
}

/** This thread's id in the kernel (for another thread to read its run-queue wait), or 0 where unknown. */
export function kernelThreadId(): number {
  try {
    // "/proc/thread-self" links to "<process id>/task/<thread id>".
    const id = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(id) && id > 0 ? id : 0;
  } catch {
    return 0;
  }
}

/** Milliseconds thread `threadId` of this process has waited for a CPU, or undefined where unknown. */
export function threadRunQueueWaitMilliseconds(threadId: number): number | undefined {
  if (threadId <= 0) return undefined;
  try {
    const waiting = Number(readFileSync(`/proc/self/task/${threadId}/schedstat`, 'utf8').split(' ')[1]);
    return Number.isFinite(waiting) ? waiting / 1e6 : undefined;
  } catch {
    // The thread has ended (a replaced isolate), or no /proc.
    return undefined;
  }
}
