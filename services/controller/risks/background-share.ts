// How long the workloads-at-risk work pauses between slices while the API is answering requests
// (issue 35). A fixed pause gave it about 1% of a core however idle the event loop was, so under
// steady admission traffic one policy change touching 1,000 workloads waited many seconds. The
// pause now follows the loop: the background takes at most half of the time the loop spent idle
// since the previous slice (the requests' own time is theirs), and never less than the old 1%.

/** The event loop's time since the previous slice ended: busy (requests and the slice) and idle. */
export interface LoopTime {
  activeMs: number;
  idleMs: number;
}

/** The part of the loop's idle time the background may take. */
export const IDLE_SHARE = 0.5;
/** The longest pause: the share of a loop that is never idle (a slice of 0.5 ms every 50 ms). */
export const MAX_PAUSE_MS = 50;

/**
 * The pause after a slice of `sliceMs`, given the loop's time since the previous slice ended (the
 * slice included): a loop idle a fraction `idle` of the time between slices gives the background a
 * share `IDLE_SHARE × idle` of it.
 */
export function pauseAfterSlice(sliceMs: number, loop: LoopTime): number {
  const requestsMs = Math.max(0, loop.activeMs - sliceMs);
  const observedMs = requestsMs + Math.max(0, loop.idleMs);
  if (observedMs <= 0) return Math.min(MAX_PAUSE_MS, sliceMs);
  const share = IDLE_SHARE * (Math.max(0, loop.idleMs) / observedMs);
  if (share <= 0) return MAX_PAUSE_MS;
  return Math.min(MAX_PAUSE_MS, Math.max(0, sliceMs * (1 / share - 1)));
}
