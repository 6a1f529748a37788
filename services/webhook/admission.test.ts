import {
  buildAdmissionResponse,
  parseAdmissionReview,
  parseAdmissionReviewText,
  uidFromReviewPrefix,
} from './admission';

const podTemplate = (labels: Record<string, unknown>) => ({ template: { metadata: { labels } } });
const OWN = { 'app.kubernetes.io/managed-by': 'helm' };
const POD = { app: 'web', tier: 'frontend' };

function review(request: Record<string, unknown>, apiVersion = 'admission.k8s.io/v1'): unknown {
  return { apiVersion, kind: 'AdmissionReview', request };
}

const deploymentRequest = {
  uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
  kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
  resource: { group: 'apps', version: 'v1', resource: 'deployments' },
  name: 'web',
  namespace: 'shop',
  operation: 'CREATE',
  object: {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: OWN },
    spec: podTemplate(POD),
  },
};

describe('parseAdmissionReview', () => {
  it('extracts uid, namespace, resource, kind, operation and pod labels', () => {
    expect(parseAdmissionReview(review(deploymentRequest))).toEqual({
      ok: true,
      request: {
        uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
        reviewApiVersion: 'admission.k8s.io/v1',
        namespace: 'shop',
        name: 'web',
        operation: 'CREATE',
        resource: { group: 'apps', version: 'v1', resource: 'deployments' },
        kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
        labels: POD,
        companions: { annotations: {}, portNames: [] },
        object: deploymentRequest.object,
        oldObject: null,
        requester: null,
      },
    });
  });

  it('reads who makes the request from userInfo, keeping only string groups', () => {
    const parsed = parseAdmissionReview(
      review({
        ...deploymentRequest,
        userInfo: { username: 'alice', groups: ['devs', 7, 'system:authenticated'], uid: 'x' },
      }),
    );
    expect(parsed.ok && parsed.request.requester).toEqual({
      username: 'alice',
      groups: ['devs', 'system:authenticated'],
    });
    const nameless = parseAdmissionReview(review({ ...deploymentRequest, userInfo: { groups: ['devs'] } }));
    expect(nameless.ok && nameless.request.requester).toBeNull();
  });

  it('forwards only the annotations and port names companion checks read', () => {
    const parsed = parseAdmissionReview(
      review({
        ...deploymentRequest,
        object: {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: {
            name: 'web',
            namespace: 'shop',
            annotations: {
              'cert-manager.io/cluster-issuer': 'letsencrypt',
              'team.example.com/secret-note': 'x',
            },
          },
          spec: {
            template: {
              metadata: { labels: POD },
              spec: { containers: [{ name: 'web', ports: [{ name: 'metrics', containerPort: 9090 }] }] },
            },
          },
        },
      }),
    );
    expect(parsed.ok && parsed.request.companions).toEqual({
      annotations: { 'cert-manager.io/cluster-issuer': 'letsencrypt' },
      portNames: ['metrics'],
    });
  });

  it('reads the new object on UPDATE, not oldObject', () => {
    const parsed = parseAdmissionReview(
      review({
        ...deploymentRequest,
        operation: 'UPDATE',
        oldObject: { metadata: { name: 'web' }, spec: podTemplate({ app: 'old' }) },
      }),
    );
    expect(parsed.ok && parsed.request.labels).toEqual(POD);
  });

  it('falls back to oldObject when object is null', () => {
    const parsed = parseAdmissionReview(
      review({
        ...deploymentRequest,
        operation: 'DELETE',
        object: null,
        oldObject: deploymentRequest.object,
      }),
    );
    expect(parsed.ok && parsed.request.labels).toEqual(POD);
  });

  it('derives kind from the object and namespace from its metadata when the request lacks them', () => {
    const parsed = parseAdmissionReview(
      review({
        uid: 'u1',
        object: {
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: { namespace: 'ops' },
          spec: podTemplate(POD),
        },
      }),
    );
    expect(parsed).toMatchObject({
      ok: true,
      request: {
        namespace: 'ops',
        kind: { group: 'batch', version: 'v1', kind: 'Job' },
        labels: POD,
        resource: null,
      },
    });
  });

  it('echoes a v1beta1 review version', () => {
    const parsed = parseAdmissionReview(review(deploymentRequest, 'admission.k8s.io/v1beta1'));
    expect(parsed.ok && parsed.request.reviewApiVersion).toBe('admission.k8s.io/v1beta1');
  });

  it.each([
    ['null', null, ''],
    ['an array', [1, 2], ''],
    ['a string', 'AdmissionReview', ''],
    ['no request', { kind: 'AdmissionReview' }, ''],
    ['a request without uid', review({ namespace: 'shop' }), ''],
    ['a request with a numeric uid', review({ uid: 42, namespace: 'shop' }), ''],
  ])('rejects %s without a uid', (_label, body, uid) => {
    const parsed = parseAdmissionReview(body);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.uid).toBe(uid);
  });

  it('keeps the uid of a review that has no namespace', () => {
    const parsed = parseAdmissionReview(
      review({ uid: 'u-cluster', kind: { group: '', version: 'v1', kind: 'Node' } }),
    );
    expect(parsed).toEqual({
      ok: false,
      uid: 'u-cluster',
      reviewApiVersion: 'admission.k8s.io/v1',
      problem: expect.stringContaining('no namespace'),
    });
  });

  it('keeps the uid of a review whose kind is not AdmissionReview', () => {
    const parsed = parseAdmissionReview({
      ...(review({ uid: 'u-kind' }) as object),
      kind: 'SomethingElse',
    });
    expect(parsed).toEqual({
      ok: false,
      uid: 'u-kind',
      reviewApiVersion: 'admission.k8s.io/v1',
      problem: 'kind is "SomethingElse", expected AdmissionReview',
    });
  });

  it('treats text that is not JSON as a malformed review', () => {
    expect(parseAdmissionReviewText('{"request":')).toMatchObject({
      ok: false,
      uid: '',
      problem: expect.stringMatching(/^body is not JSON/),
    });
    expect(parseAdmissionReviewText('')).toMatchObject({ ok: false, uid: '' });
  });
});

describe('uidFromReviewPrefix', () => {
  it('finds the uid the API server writes first in request', () => {
    const prefix =
      '{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"abc-123","kind":{"gro';
    expect(uidFromReviewPrefix(prefix)).toBe('abc-123');
  });

  it('does not take a uid from elsewhere (e.g. object metadata)', () => {
    expect(uidFromReviewPrefix('{"request":{"kind":{},"object":{"metadata":{"uid":"not-it"}}')).toBe('');
    expect(uidFromReviewPrefix('garbage')).toBe('');
  });
});

describe('buildAdmissionResponse', () => {
  it('is an allowed AdmissionReview v1 echoing the uid', () => {
    expect(buildAdmissionResponse('u-1', ['[WARNING] w'])).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u-1', allowed: true, warnings: ['[WARNING] w'] },
    });
  });

  it('has an empty warnings list and the given review version otherwise', () => {
    expect(buildAdmissionResponse('', [], 'admission.k8s.io/v1beta1')).toEqual({
      apiVersion: 'admission.k8s.io/v1beta1',
      kind: 'AdmissionReview',
      response: { uid: '', allowed: true, warnings: [] },
    });
  });
});
