// The AdmissionReviews of the webhook fault matrix (webhook-fault-matrix.test.ts): half of them valid,
// the rest broken in every way the API server or an attacker could send, and what each must be
// answered with.

const OVERSIZED_REVIEW_BYTES = 5 * 1024 * 1024;
const ADMISSION_V1 = 'admission.k8s.io/v1';

export interface ReviewCase {
  name: string;
  body: () => string;
  contentType: string;
  method?: 'POST' | 'GET';
  /** The uid the answer must carry ('' when the review has none we could read). */
  uid: string;
  apiVersion: string;
}

function deploymentReview(uid: string, apiVersion = ADMISSION_V1): Record<string, unknown> {
  const labels = { app: 'web' };
  return {
    apiVersion,
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      name: 'web',
      namespace: 'shop',
      operation: 'CREATE',
      userInfo: { username: 'developer' },
      object: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'shop', labels },
        spec: {
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [] } },
        },
      },
      oldObject: null,
    },
  };
}

const VALID_REVIEW = JSON.stringify(deploymentReview('uid-valid'));
const OVERSIZED_REVIEW = (() => {
  const review = deploymentReview('uid-oversized');
  (review.request as Record<string, unknown>).padding = 'x'.repeat(OVERSIZED_REVIEW_BYTES);
  return JSON.stringify(review);
})();

/** A JSON POST without a uid to read, answered as admission.k8s.io/v1, unless `overrides` says otherwise. */
function reviewCase(name: string, body: () => string, overrides: Partial<ReviewCase> = {}): ReviewCase {
  return { name, body, contentType: 'application/json', uid: '', apiVersion: ADMISSION_V1, ...overrides };
}

const VALID_CASE = reviewCase('valid', () => VALID_REVIEW, { uid: 'uid-valid' });
const BROKEN_CASES: ReviewCase[] = [
  reviewCase('invalid JSON', () => VALID_REVIEW.slice(0, 120)),
  reviewCase('empty body', () => ''),
  reviewCase('wrong content type', () => VALID_REVIEW, { contentType: 'text/plain', uid: 'uid-valid' }),
  reviewCase('wrong apiVersion', () => JSON.stringify(deploymentReview('uid-v2', 'admission.k8s.io/v2')), {
    uid: 'uid-v2',
  }),
  reviewCase('not a review', () => JSON.stringify([{ kind: 'AdmissionReview' }, 42]), {
    contentType: 'application/x-www-form-urlencoded',
  }),
];
/** Half of all requests are valid reviews; the rest is every kind of broken request, in turn. */
const REVIEW_CASES: ReviewCase[] = BROKEN_CASES.flatMap((broken) => [VALID_CASE, broken]);
const OVERSIZED_CASE = reviewCase('oversized', () => OVERSIZED_REVIEW, { uid: 'uid-oversized' });
const GET_CASE = reviewCase('GET', () => '', { method: 'GET' });

export function reviewCaseFor(sequence: number): ReviewCase {
  if (sequence % 500 === 250) return OVERSIZED_CASE;
  if (sequence % 500 === 499) return GET_CASE;
  return REVIEW_CASES[sequence % REVIEW_CASES.length];
}
