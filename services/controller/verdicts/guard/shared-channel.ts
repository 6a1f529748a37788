import type { RegoReply } from './isolate-protocol';

// The evaluation isolate's fast path for Rego (docs/decisions.md "Isolated evaluators"): a request
// and its replies cross as bytes in shared memory, not as postMessage messages. A message is
// structured-cloned on one side, queued, dispatched through the worker's event loop and cloned back:
// with an admission's five Rego constraints that cost about twice the evaluations themselves
// (docs/benchmarks.md). Here the controller writes the review and each constraint's parameters once
// into the request area and wakes the isolate (Atomics.notify); the isolate, blocked in
// Atomics.wait, reads them in place and writes its replies as JSON into the reply area. A request
// or a reply that does not fit its area goes by message as before.

/** Bytes of one isolate's request area: a review of up to about 1 MiB of JSON goes this way. */
export const REQUEST_AREA_BYTES = 1024 * 1024;
/** Bytes of one isolate's reply area: violation messages are short; more goes by message. */
export const REPLY_AREA_BYTES = 256 * 1024;

/** One Rego item of a shared request: the policy and where its parameters' bytes are. */
export interface SharedRegoItem {
  policy: string;
  parametersLength: number;
}

/** What the header of a shared request says: the items, and the review's length. */
export interface SharedRegoHeader {
  items: SharedRegoItem[];
  reviewLength: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Writes a request into `area`: the header's length (4 bytes), the header (JSON), the review, then
 * each item's parameters. Returns false when it does not fit (the caller sends it by message).
 */
export function writeSharedRequest(
  area: Uint8Array,
  review: Uint8Array,
  items: ReadonlyArray<{ policy: string; parameters: Uint8Array }>,
): boolean {
  const header: SharedRegoHeader = {
    items: items.map(({ policy, parameters }) => ({ policy, parametersLength: parameters.byteLength })),
    reviewLength: review.byteLength,
  };
  const headerText = JSON.stringify(header);
  // UTF-8 takes at most 3 bytes per UTF-16 unit: a bound checked before anything is written.
  let needed = 4 + headerText.length * 3 + review.byteLength;
  for (const { parameters } of items) needed += parameters.byteLength;
  if (needed > area.byteLength) return false;
  const written = encoder.encodeInto(headerText, area.subarray(4)).written;
  new DataView(area.buffer, area.byteOffset, 4).setUint32(0, written);
  let offset = 4 + written;
  area.set(review, offset);
  offset += review.byteLength;
  for (const { parameters } of items) {
    area.set(parameters, offset);
    offset += parameters.byteLength;
  }
  return true;
}

/** Reads a request written by writeSharedRequest: the header, and each item's input bytes. */
export function readSharedRequest(area: Uint8Array): {
  header: SharedRegoHeader;
  inputOf: (index: number) => Uint8Array;
} {
  const headerLength = new DataView(area.buffer, area.byteOffset, 4).getUint32(0);
  const header = JSON.parse(decoder.decode(area.subarray(4, 4 + headerLength))) as SharedRegoHeader;
  const reviewStart = 4 + headerLength;
  const review = area.subarray(reviewStart, reviewStart + header.reviewLength);
  const starts: number[] = [];
  let offset = reviewStart + header.reviewLength;
  for (const item of header.items) {
    starts.push(offset);
    offset += item.parametersLength;
  }
  return {
    header,
    // The input of one item: the review and its parameters side by side, copied out of shared memory.
    inputOf: (index) => {
      const parameters = area.subarray(starts[index], starts[index] + header.items[index].parametersLength);
      const input = new Uint8Array(review.byteLength + parameters.byteLength);
      input.set(review);
      input.set(parameters, review.byteLength);
      return input;
    },
  };
}

/** Writes replies as JSON into `area`; the length written, or undefined when they do not fit. */
export function writeSharedReplies(area: Uint8Array, replies: RegoReply[]): number | undefined {
  const text = JSON.stringify(replies);
  if (text.length * 3 > area.byteLength) return undefined;
  return encoder.encodeInto(text, area).written;
}

export function readSharedReplies(area: Uint8Array, length: number): RegoReply[] {
  return JSON.parse(decoder.decode(area.subarray(0, length))) as RegoReply[];
}
