import { ADMISSION_V1 } from '../model/admission-review';
import { REVIEW_UID_PATTERN } from '../model/forwarded-review';

// The webhook's side of the admission core (spec 4.5, DESIGN.md 7): reading a review is a model fact
// (model/admission-review.ts, shared with `forewarn check --url`); here, the uid of a review too large
// to read and the AdmissionReview the webhook returns. Nothing here throws on bad input (rule B-1).

export {
  ADMISSION_V1,
  constraintQueryOf,
  parseAdmissionReview,
  parseAdmissionReviewText,
  type AdmissionRequestSummary,
  type GroupVersionKind,
  type GroupVersionResource,
  type ParsedReview,
} from '../model/admission-review';

// The API server serialises `request` with `uid` as its first field. A review too large to read
// whole can still be answered with its uid when that prefix arrived.
const LEADING_UID = new RegExp(`"request"\\s*:\\s*\\{\\s*"uid"\\s*:\\s*"(${REVIEW_UID_PATTERN})"`);

/** The uid of a review from the first bytes of its text, when it is where the API server puts it. */
export function uidFromReviewPrefix(prefix: string): string {
  return LEADING_UID.exec(prefix)?.[1] ?? '';
}

export interface AdmissionReviewResponse {
  apiVersion: string;
  kind: 'AdmissionReview';
  response: { uid: string; allowed: true; warnings: string[] };
}

/** The only answer the webhook ever gives: allowed, with warnings (rule B-1). */
export function buildAdmissionResponse(
  uid: string,
  warnings: readonly string[] = [],
  reviewApiVersion: string = ADMISSION_V1,
): AdmissionReviewResponse {
  return {
    apiVersion: reviewApiVersion,
    kind: 'AdmissionReview',
    response: { uid, allowed: true, warnings: [...warnings] },
  };
}
