import { MAX_CHECK_BODY_BYTES } from './admission-query';
import { constraintQueryOf, parseAdmissionReviewText } from './admission-review';
import { checkOfForwardedReview, DECLINED_REVIEW_STATUS, forwardedReviewOf } from './forwarded-review';

const UID = '0f6c8b52-3b8e-4f4a-9c51-4d1f0e2a7b39';

/** A review in the API server's field order: kind, apiVersion, then request with uid first. */
function review(request: Record<string, unknown>, apiVersion = 'admission.k8s.io/v1'): string {
  return JSON.stringify({ kind: 'AdmissionReview', apiVersion, request: { uid: UID, ...request } });
}

const DEPLOYMENT = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'shop',
    labels: { app: 'web' },
    managedFields: [{ manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:spec': {} } }],
  },
  spec: { template: { spec: { containers: [{ name: 'web', image: 'nginx' }] } } },
};

const CREATE = {
  kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
  resource: { group: 'apps', version: 'v1', resource: 'deployments' },
  name: 'web',
  namespace: 'shop',
  operation: 'CREATE',
  userInfo: { username: 'alice', groups: ['devs', 'system:authenticated'] },
  object: DEPLOYMENT,
  oldObject: null,
};

describe('forwardedReviewOf', () => {
  it('takes the uid and version from the first bytes and forwards the text with the uid blanked', () => {
    const text = review(CREATE);
    const forwarded = forwardedReviewOf(text, 'warnings');
    expect(forwarded).toMatchObject({ uid: UID, reviewApiVersion: 'admission.k8s.io/v1' });
    const body = JSON.parse(forwarded?.checkBody ?? '') as { view: string; review: unknown };
    const expected = JSON.parse(text) as { request: Record<string, unknown> };
    expected.request.uid = '';
    expect(body).toEqual({ view: 'warnings', review: expected });
  });

  it('gives equal bodies to reviews that differ only by their uid', () => {
    const first = forwardedReviewOf(review(CREATE), 'warnings');
    const second = forwardedReviewOf(review(CREATE).replace(UID, 'another-uid'), 'warnings');
    expect(second?.uid).toBe('another-uid');
    expect(second?.checkBody).toBe(first?.checkBody);
  });

  it("leaves out the whitespace Go's encoder ends the review with, so the body is one line", () => {
    const text = review(CREATE);
    const forwarded = forwardedReviewOf(`${text}\n`, 'warnings');
    expect(forwarded?.checkBody).toBe(forwardedReviewOf(text, 'warnings')?.checkBody);
    expect(forwarded?.checkBody).not.toContain('\n');
    expect(forwardedReviewOf(`${text} \r\n\t\n`, 'warnings')?.checkBody).toBe(forwarded?.checkBody);
  });

  it('keeps a v1beta1 review its version', () => {
    expect(forwardedReviewOf(review(CREATE, 'admission.k8s.io/v1beta1'), 'warnings')).toMatchObject({
      reviewApiVersion: 'admission.k8s.io/v1beta1',
    });
  });

  it.each([
    [
      'fields in another order',
      JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: UID } }),
    ],
    [
      'spaces after the colons',
      review(CREATE).replace('"kind":"AdmissionReview"', '"kind": "AdmissionReview"'),
    ],
    ['another kind', review(CREATE).replace('"AdmissionReview"', '"ConfigMap"')],
    ['another version', review(CREATE, 'admission.k8s.io/v2')],
    [
      'uid not first',
      JSON.stringify({
        kind: 'AdmissionReview',
        apiVersion: 'admission.k8s.io/v1',
        request: { ...CREATE, uid: UID },
      }),
    ],
    ['a uid with a quote', review(CREATE).replace(UID, 'a\\"b')],
    ['an empty uid', review(CREATE).replace(UID, '')],
  ])('leaves a review with %s to the webhook', (_name, text) => {
    expect(forwardedReviewOf(text, 'warnings')).toBeUndefined();
  });

  it('leaves a review to the webhook when the forwarded body would pass the controller cap', () => {
    const large = review({
      ...CREATE,
      object: { ...DEPLOYMENT, data: 'x'.repeat(MAX_CHECK_BODY_BYTES - 100) },
    });
    expect(forwardedReviewOf(large, 'warnings')).toBeUndefined();
    const fits = review({ ...CREATE, object: { ...DEPLOYMENT, data: 'x'.repeat(MAX_CHECK_BODY_BYTES / 4) } });
    expect(forwardedReviewOf(fits, 'warnings')).toBeDefined();
  });
});

describe('checkOfForwardedReview', () => {
  /** What the controller reads from the webhook's own check body for the same review. */
  function ownCheckBody(text: string): unknown {
    const parsed = parseAdmissionReviewText(text);
    if (!parsed.ok) throw new Error(parsed.problem);
    return JSON.parse(constraintQueryOf(parsed.request, 'warnings').checkBody ?? 'null');
  }

  it.each([
    ['a CREATE', CREATE],
    ['an UPDATE', { ...CREATE, operation: 'UPDATE', oldObject: { ...DEPLOYMENT, spec: {} } }],
    ['an object without apiVersion, kind or namespace', { ...CREATE, object: { metadata: { name: 'web' } } }],
    ['a review without userInfo', { ...CREATE, userInfo: undefined }],
  ])('gives %s the fields of the check body the webhook would build', (_name, request) => {
    const text = review(request);
    const forwarded = forwardedReviewOf(text, 'warnings');
    const body = JSON.parse(forwarded?.checkBody ?? '') as { review: unknown; view: unknown };
    const check = checkOfForwardedReview(body.review, body.view);
    expect(check.ok).toBe(true);
    if (check.ok) expect(JSON.parse(JSON.stringify(check.fields))).toEqual(ownCheckBody(text));
  });

  it.each([
    ['a DELETE', { ...CREATE, operation: 'DELETE', object: null, oldObject: DEPLOYMENT }],
    ['a CONNECT', { ...CREATE, operation: 'CONNECT' }],
    ['no object', { ...CREATE, object: null }],
  ])('declines %s, which the webhook asks about by its labels', (_name, request) => {
    const check = checkOfForwardedReview(JSON.parse(review(request)), 'warnings');
    expect(check).toMatchObject({ ok: false, status: DECLINED_REVIEW_STATUS });
  });

  it.each([
    ['not an object', 'review'],
    ['no request', { kind: 'AdmissionReview' }],
    [
      'no namespace',
      JSON.parse(
        review({
          ...CREATE,
          namespace: '',
          object: { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'x' } },
        }),
      ),
    ],
    ['another kind', { kind: 'ConfigMap', request: {} }],
  ])('answers a review with %s as unreadable (400)', (_name, value) => {
    expect(checkOfForwardedReview(value, 'warnings')).toMatchObject({ ok: false, status: 400 });
  });
});
