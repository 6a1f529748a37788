import {
  listQueryOf,
  MAX_CHECK_BODY_BYTES,
  MAX_CHECKS_PER_BATCH,
  type ControllerQuery,
} from '../model/admission-query';
import {
  DEFAULT_QUERY_TIMEOUT_MS,
  type CheckBatchClient,
  type ConstraintQueryResult,
  type ControllerClient,
} from './controller-client';
import { errorMessage } from '../model/error-message';

// Reviews that arrive while the controller is already answering wait for it together and go as one
// request (`POST /api/v1/admission-checks`, docs/decisions.md "Checks in flight together"). The
// controller is one thread: a check sent at once would wait in its socket for the ones before it
// anyway. Sent together, the checks of a burst cost one request's reading, parsing and answering in
// each process instead of one per check, and the controller runs them back to back with warm caches.
// A review that finds nothing in flight goes at once, alone, on the single route: one client at a
// time never waits and its requests are unchanged. Every check keeps its own deadline (3 s from its
// arrival): a batch is sent with the time its oldest check has left.

/** How long the webhook sends single checks only after the controller had no batch route (a rolling upgrade). */
export const BATCHES_REFUSED_PAUSE_MS = 60_000;

export interface CheckBatchingOptions {
  /** Each check's deadline from its arrival; default the query timeout (spec: 3 s). */
  timeoutMs?: number;
  /** Milliseconds on a monotonic clock; tests may pass their own. */
  now?: () => number;
  /** Told the size of every batch sent (the webhook's metrics). */
  observeBatch?: (checks: number) => void;
}

interface WaitingCheck {
  body: string;
  bytes: number;
  deadline: number;
  resolve: (result: ConstraintQueryResult) => void;
}

/** How many of the oldest waiting checks fit one batch (at least one). */
function batchLength(waiting: readonly WaitingCheck[]): number {
  let bytes = 0;
  let count = 0;
  while (count < waiting.length && count < MAX_CHECKS_PER_BATCH) {
    const next = bytes + waiting[count].bytes + 1;
    if (count > 0 && next > MAX_CHECK_BODY_BYTES) break;
    bytes = next;
    count++;
  }
  return count;
}

export function batchConcurrentChecks(
  client: CheckBatchClient,
  options: CheckBatchingOptions = {},
): ControllerClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  const now = options.now ?? (() => performance.now());
  // One request (single or batch) in flight at a time: the controller answers one after the other.
  let inFlight = false;
  const waiting: WaitingCheck[] = [];
  let batchesRefusedUntil = Number.NEGATIVE_INFINITY;

  /** The checks of a batch the controller had no route for, each sent alone within its deadline. */
  function sendEachAlone(batch: readonly WaitingCheck[]): Promise<void> {
    const sentAt = now();
    return Promise.all(
      batch.map((check) =>
        client.query({ checkBody: check.body }, Math.max(1, check.deadline - sentAt)).then(check.resolve),
      ),
    ).then(() => undefined);
  }

  async function sendBatch(batch: readonly WaitingCheck[]): Promise<void> {
    const remaining = batch[0].deadline - now();
    if (remaining <= 0) {
      for (const check of batch)
        check.resolve({ ok: false, reason: 'timeout', detail: `no answer within ${timeoutMs} ms` });
      return;
    }
    if (batch.length === 1) {
      batch[0].resolve(await client.query({ checkBody: batch[0].body }, remaining));
      return;
    }
    options.observeBatch?.(batch.length);
    const results = await client.queryChecks(
      batch.map((check) => check.body),
      remaining,
    );
    if (results.every((result) => !result.ok && result.reason === 'bad_status' && result.status === 404)) {
      // A controller older than the batch route: single checks for a while, these ones first.
      batchesRefusedUntil = now() + BATCHES_REFUSED_PAUSE_MS;
      return sendEachAlone(batch);
    }
    batch.forEach((check, index) => check.resolve(results[index]));
  }

  function release(): void {
    inFlight = false;
    if (waiting.length === 0) return;
    inFlight = true;
    const batch = waiting.splice(0, batchLength(waiting));
    sendBatch(batch)
      .catch((error: unknown) => {
        // The client answers failures as values; anything else must not leave a review waiting.
        for (const check of batch)
          check.resolve({ ok: false, reason: 'unreachable', detail: errorMessage(error) });
      })
      .finally(release);
  }

  return {
    query(query: ControllerQuery): Promise<ConstraintQueryResult> {
      const body = query.checkBody;
      if (listQueryOf(query) || body === undefined || now() < batchesRefusedUntil) return client.query(query);
      if (!inFlight) {
        inFlight = true;
        return client.query(query).finally(release);
      }
      // A line of the batch must be one check: a body with a raw newline (not one the webhook
      // wrote, JSON.stringify never writes one) goes alone, as does one too large to share.
      const bytes = Buffer.byteLength(body);
      if (bytes >= MAX_CHECK_BODY_BYTES || body.includes('\n')) return client.query(query);
      return new Promise((resolve) => {
        waiting.push({ body, bytes, deadline: now() + timeoutMs, resolve });
      });
    },
    close: () => client.close(),
  };
}
