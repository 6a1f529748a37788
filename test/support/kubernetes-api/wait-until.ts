/**
 * Polls `condition` (sync or async; a throw counts as "not yet") until it holds, and returns how
 * long that took in ms; rejects after `timeoutMs` so no test waits unboundedly. The default bound,
 * 10 s under jest's 20 s per test, is for a machine at load 15: what a test tells apart with it is
 * "from a watch or a write" from "at a periodic rescan" (a minute or an hour in the tests), never a
 * speed; a wait that holds returns as soon as it holds.
 */
export const EVENTUAL_BOUND_MS = 10_000;

export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  description: string,
  timeoutMs = EVENTUAL_BOUND_MS,
  intervalMs = 10,
): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (
      await Promise.resolve()
        .then(condition)
        .catch(() => false)
    )
      return Date.now() - started;
    if (Date.now() - started > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting until ${description}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * waitUntil for certificate work (key generation, watches), polled every 50 ms. What these waits tell
 * apart is "at once, from a watch" from "at the next periodic check" (an hour in the tests), so the
 * bound is 15 s, under jest's 20 s per test: key generation and TLS handshakes on a machine at load
 * 15 took more than the 3 s this was before.
 */
export function waitForCertificates(
  condition: () => boolean | Promise<boolean>,
  description: string,
  timeoutMs = 15_000,
): Promise<number> {
  return waitUntil(condition, description, timeoutMs, 50);
}

/** The parsed JSON body of a client-node ApiException (it keeps the body as text). */
export function errorBody(error: unknown): Record<string, unknown> {
  if (typeof error !== 'object' || error === null || !('body' in error)) return {};
  const body: unknown = typeof error.body === 'string' ? JSON.parse(error.body) : error.body;
  return typeof body === 'object' && body !== null ? { ...body } : {};
}

/** The HTTP status of a client-node ApiException, or undefined for other errors. */
export function errorCode(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'number'
    ? error.code
    : undefined;
}

/** The error a request that must fail was rejected with (for errorCode and errorBody). */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the request to fail');
}
