// Exponential backoff shared by the certificate tasks that wait on the API server (CA injection,
// startup, the Secret watch). Tests pass short policies and no jitter so timing is predictable.

export interface BackoffPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
  factor: number;
  /** Total tries, the first included. */
  maxAttempts: number;
  /** Fraction of random spread (0..1), so replicas started together do not retry in lockstep. */
  jitter?: number;
}

/** Delay before try `failedAttempts + 1`: initial · factor^(failedAttempts−1), capped, spread by jitter. */
export function backoffDelay(
  policy: BackoffPolicy,
  failedAttempts: number,
  random: () => number = Math.random,
): number {
  const exponential = policy.initialDelayMs * Math.pow(policy.factor, Math.max(0, failedAttempts - 1));
  const capped = Math.min(policy.maxDelayMs, exponential);
  const spread = policy.jitter ?? 0;
  return Math.round(capped * (1 - spread + 2 * spread * random()));
}

/** Waits `ms`, or less when `signal` aborts; never rejects. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
