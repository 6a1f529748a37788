import { isRecord } from './kubernetes';
import { admissionCheckFields, fitsCheckBodyCap } from './admission-query';
import { checkIdentityOf, readAdmissionRequest } from './admission-review';
import type { AdmissionCheckView } from './api';

// A review the webhook hands on whole (issue 33): the webhook reads the uid and the review's version
// from the first bytes of the API server's text and forwards the text itself in the admission-check
// body, `{"view": ..., "review": <the AdmissionReview>}`, so that the review is parsed once, by the
// controller, instead of parsed by the webhook, re-serialised as a check body and parsed again. The
// controller builds the check from it with the functions the webhook's own check body is made by
// (admissionCheckFields), so both paths judge the same object and give the same answer. A review the
// controller does not check (no object, an operation other than CREATE or UPDATE) is declined with
// 422 and the webhook reads it itself, as it reads any review not written the API server's way.

/** A review's uid as the webhook reads it from the text (a UUID from the API server). */
export const REVIEW_UID_PATTERN = '[A-Za-z0-9._:-]{1,128}';

/**
 * The start of a review as the API server writes it (Go's encoding/json: `kind` and `apiVersion`
 * first, then `request` with `uid` first, no spaces). Anything else is read by the webhook itself.
 */
const API_SERVER_REVIEW_START = new RegExp(
  `^\\{"kind":"AdmissionReview","apiVersion":"(admission\\.k8s\\.io/v1(?:beta1)?)","request":\\{"uid":"(${REVIEW_UID_PATTERN})"`,
);

/** Bytes the forwarded body adds around the review: `{"view":"<view>","review":` and `}`. */
const WRAPPER_BYTES = 64;

/** The status with which the controller declines a review it does not check. */
export const DECLINED_REVIEW_STATUS = 422;

export interface ForwardedReview {
  uid: string;
  /** The review's own apiVersion, echoed in the answer. */
  reviewApiVersion: string;
  /** The admission-check body: the review with its uid blanked, so equal reviews have equal bodies. */
  checkBody: string;
}

/**
 * The admission-check body that forwards this review, or undefined when the webhook must read the
 * review itself: not written the API server's way, or too large for the controller's body cap.
 * The uid is blanked in the forwarded text: the webhook keeps it for its answer, and reviews that
 * differ only by it share one check (coalescing) and one remembered answer (the controller's memo).
 */
export function forwardedReviewOf(text: string, view: AdmissionCheckView): ForwardedReview | undefined {
  const start = API_SERVER_REVIEW_START.exec(text);
  if (!start || !fitsCheckBodyCap(text, WRAPPER_BYTES)) return undefined;
  const [prefix, reviewApiVersion, uid] = start;
  // The prefix ends with the uid's closing quote.
  const uidEnd = prefix.length - 1;
  return {
    uid,
    reviewApiVersion,
    checkBody: `{"view":"${view}","review":${text.slice(0, uidEnd - uid.length)}${text.slice(uidEnd, endOfJsonValue(text))}}`,
  };
}

/**
 * Where the text ends without its trailing JSON whitespace. Go's encoder ends the API server's review
 * with a newline; without it, the forwarded body is one line and can share a batch of checks
 * (webhook/check-batching.ts), whose bodies are newline-delimited.
 */
function endOfJsonValue(text: string): number {
  let end = text.length;
  for (;;) {
    const code = text.charCodeAt(end - 1);
    if (code !== 0x0a && code !== 0x0d && code !== 0x20 && code !== 0x09) return end;
    end--;
  }
}

export type ForwardedCheck =
  | { ok: true; fields: Record<string, unknown> }
  | { ok: false; status: 400 | typeof DECLINED_REVIEW_STATUS; problem: string };

/**
 * The admission-check fields of a forwarded review: what the webhook's own check body for it holds
 * (admissionCheckFields over the same review), with the body's `view`. A review without an object to
 * check is declined (422), a review that cannot be read is a 400; either way the webhook then reads it.
 */
export function checkOfForwardedReview(review: unknown, view: unknown): ForwardedCheck {
  if (!isRecord(review)) return { ok: false, status: 400, problem: 'review must be a JSON object' };
  const read = readAdmissionRequest(review, false);
  if (!read.ok) return { ok: false, status: 400, problem: `review: ${read.problem}` };
  const { request } = read;
  // As constraintQueryOf: a review without a kind, or without an object, is asked by its labels.
  const fields = request.kind
    ? admissionCheckFields(
        request.operation,
        request.object,
        request.oldObject,
        checkIdentityOf(request, request.kind),
        undefined,
        request.requester,
      )
    : undefined;
  if (!fields)
    return {
      ok: false,
      status: DECLINED_REVIEW_STATUS,
      problem:
        'the review has no object the admission check judges (CREATE or UPDATE with a kind): ask with the label query',
    };
  // The check body's own `view` key sits after `operation`; readCheckRequest reads it by name.
  return { ok: true, fields: view === undefined ? fields : Object.assign(fields, { view }) };
}
