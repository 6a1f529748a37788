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
 * the answer instead of seeing a reset) up to `drainLimitBytes`, after which it gives up.
 */
export async function readRequestBody(
  request: Readable,
  maxBytes: number,
  drainLimitBytes: number = maxBytes * 16,
): Promise<RequestBody> {
  const chunks: Buffer[] = [];
  let receivedBytes = 0;
  let oversized = false;
  let prefix = '';
  for await (const chunk of request) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    receivedBytes += buffer.length;
    if (!oversized && receivedBytes > maxBytes) {
      oversized = true;
      prefix = Buffer.concat([...chunks, buffer])
        .subarray(0, PREFIX_BYTES)
        .toString('utf8');
      chunks.length = 0;
    }
    if (oversized) {
      if (receivedBytes > drainLimitBytes) {
        request.destroy();
        throw new RequestBodyAbandonedError(`request body exceeded ${drainLimitBytes} bytes`);
      }
      continue;
    }
    chunks.push(buffer);
  }
  return oversized
    ? { kind: 'oversized', prefix, receivedBytes }
    : { kind: 'complete', text: Buffer.concat(chunks).toString('utf8') };
}
