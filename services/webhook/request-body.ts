import type { Readable } from 'node:stream';

// Reads an admission request body without trusting its size or content type. express's parsers
// answer an oversized or mistyped body with 413/415, which the API server would record as a
// webhook failure; here such a body is a value the handler answers with `allowed: true`.

export type RequestBody =
  | { kind: 'complete'; text: string }
  /** Larger than the limit: only the first bytes were kept (enough to find the uid), the rest drained. */
  | { kind: 'oversized'; prefix: string; receivedBytes: number };

/** How much of an oversized body is kept for uid recovery; the API server writes the uid first. */
const PREFIX_BYTES = 4096;

export class RequestBodyAbandonedError extends Error {}

/**
 * Reads up to `maxBytes`. Beyond that it keeps draining (so the client, mid-upload, can still read
 * the answer instead of seeing a reset) up to `drainLimitBytes`, after which it gives up. Listens
 * for events rather than iterating the stream: an async iterator per review was measurable CPU.
 */
export function readRequestBody(
  request: Readable,
  maxBytes: number,
  drainLimitBytes: number = maxBytes * 16,
): Promise<RequestBody> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let receivedBytes = 0;
    let oversized = false;
    let prefix = '';
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      request.off('data', onData);
      outcome();
    };
    const onData = (chunk: unknown) => {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      receivedBytes += buffer.length;
      if (!oversized && receivedBytes > maxBytes) {
        oversized = true;
        prefix = Buffer.concat([...chunks, buffer])
          .subarray(0, PREFIX_BYTES)
          .toString('utf8');
        chunks.length = 0;
      }
      if (!oversized) {
        chunks.push(buffer);
        return;
      }
      if (receivedBytes > drainLimitBytes) {
        settle(() => reject(new RequestBodyAbandonedError(`request body exceeded ${drainLimitBytes} bytes`)));
        request.destroy();
      }
    };
    request.on('data', onData);
    request.once('end', () =>
      settle(() =>
        resolve(
          oversized
            ? { kind: 'oversized', prefix, receivedBytes }
            : { kind: 'complete', text: Buffer.concat(chunks).toString('utf8') },
        ),
      ),
    );
    request.once('error', (error) => settle(() => reject(error)));
    request.once('close', () =>
      settle(() => reject(new RequestBodyAbandonedError('the request closed before its body ended'))),
    );
  });
}
