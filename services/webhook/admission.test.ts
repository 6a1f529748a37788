import {
  buildAdmissionResponse,
  buildWarnings,
  formatWarning,
  MAX_WARNING_LENGTH,
  parseAdmissionReview,
  parseAdmissionReviewText,
  shortenWarning,
  uidFromReviewPrefix,
  workloadLabels,
  type WarningSource,
} from './admission';

const podTemplate = (labels: Record<string, unknown>) => ({ template: { metadata: { labels } } });

// The controller object's own labels differ from its pods' labels in every case, so a test
// passes only if the right set is read.
const OWN = { 'app.kubernetes.io/managed-by': 'helm' };
const POD = { app: 'web', tier: 'frontend' };

describe('workloadLabels', () => {
  it.each([
    ['apps', 'Deployment'],
    ['apps', 'StatefulSet'],
    ['apps', 'DaemonSet'],
    ['apps', 'ReplicaSet'],
    ['batch', 'Job'],
  ])('reads the pod-template labels of %s/%s', (group, kind) => {
    const object = { metadata: { labels: OWN }, spec: podTemplate(POD) };
    expect(workloadLabels({ group, kind }, object)).toEqual(POD);
  });

  it('reads spec.jobTemplate.spec.template labels of a CronJob', () => {
    const object = {
      metadata: { labels: OWN },
      spec: { jobTemplate: { metadata: { labels: { job: 'x' } }, spec: podTemplate(POD) } },
    };
    expect(workloadLabels({ group: 'batch', kind: 'CronJob' }, object)).toEqual(POD);
  });

  it.each([
    ['', 'Pod'],
    ['', 'Service'],
    ['', 'ConfigMap'],
  ])('reads the own labels of %s/%s', (group, kind) => {
    const object = { metadata: { labels: POD }, spec: podTemplate(OWN) };
    expect(workloadLabels({ group, kind }, object)).toEqual(POD);
  });

  it('uses own labels for a custom kind named Deployment outside the apps group', () => {
    const object = { metadata: { labels: OWN }, spec: podTemplate(POD) };
    expect(workloadLabels({ group: 'example.com', kind: 'Deployment' }, object)).toEqual(OWN);
  });

  it('gives no labels for a Deployment without template labels (never falls back to its own)', () => {
    expect(
      workloadLabels({ group: 'apps', kind: 'Deployment' }, { metadata: { labels: OWN }, spec: {} }),
    ).toEqual({});
  });

  it('keeps the string entries of a malformed label map', () => {
    const object = { metadata: { labels: { app: 'web', replicas: 3, broken: null } } };
    expect(workloadLabels({ group: '', kind: 'Pod' }, object)).toEqual({ app: 'web' });
  });

  it('copes with a missing object', () => {
    expect(workloadLabels({ group: 'apps', kind: 'Deployment' }, null)).toEqual({});
    expect(workloadLabels(null, undefined)).toEqual({});
  });
});

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
      },
    });
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
    ['another kind', { kind: 'Pod', request: { uid: 'u' } }, ''],
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

const critical: WarningSource = {
  severity: 'Critical',
  summary: 'ResourceQuota "compute" is at 95% of cpu',
  remediationHint: 'Ask for a larger quota',
};
const warning: WarningSource = {
  severity: 'Warning',
  summary: 'NetworkPolicy "deny-in" denies all ingress traffic',
  remediationHint: 'Add a policy allowing your ingress',
};
const info: WarningSource = {
  severity: 'Info',
  summary: 'LimitRange "defaults" sets default limits',
  remediationHint: 'Set requests explicitly',
};

describe('formatWarning', () => {
  it('prefixes by severity and joins summary and hint with " - "', () => {
    expect(formatWarning(critical)).toBe(
      '[CRITICAL] ResourceQuota "compute" is at 95% of cpu - Ask for a larger quota',
    );
    expect(formatWarning(warning)).toBe(
      '[WARNING] NetworkPolicy "deny-in" denies all ingress traffic - Add a policy allowing your ingress',
    );
  });

  it('drops Info', () => {
    expect(formatWarning(info)).toBeNull();
  });

  it('leaves out the separator when there is no hint', () => {
    expect(formatWarning({ severity: 'Warning', summary: 'Something', remediationHint: '' })).toBe(
      '[WARNING] Something',
    );
  });

  it('turns control characters (newlines, tabs) into single spaces', () => {
    expect(
      formatWarning({ severity: 'Warning', summary: 'line one\nline two\t!', remediationHint: 'fix\r\nit' }),
    ).toBe('[WARNING] line one line two ! - fix it');
  });
});

describe('shortenWarning', () => {
  it('keeps a warning of exactly 256 characters', () => {
    const text = 'x'.repeat(256);
    expect(shortenWarning(text)).toBe(text);
  });

  it('shortens 257 characters to 256 ending with …', () => {
    const shortened = shortenWarning('y'.repeat(257));
    expect(shortened).toBe(`${'y'.repeat(255)}…`);
    expect(Array.from(shortened)).toHaveLength(MAX_WARNING_LENGTH);
  });

  it('counts code points and never splits a surrogate pair', () => {
    const shortened = shortenWarning('🚫'.repeat(300));
    expect(Array.from(shortened)).toHaveLength(256);
    expect(shortened).toBe(`${'🚫'.repeat(255)}…`);
  });

  it('does not leave a space before the ellipsis', () => {
    expect(shortenWarning(`${'a'.repeat(254)} bcd`)).toBe(`${'a'.repeat(254)}…`);
  });

  it('applies to formatted warnings', () => {
    const long = formatWarning({ severity: 'Critical', summary: 's'.repeat(300), remediationHint: 'h' });
    expect(long).toBe(`[CRITICAL] ${'s'.repeat(244)}…`);
  });
});

describe('buildWarnings', () => {
  it('puts Critical first, keeps the controller order within a severity and drops Info', () => {
    const second: WarningSource = { ...warning, summary: 'second warning' };
    const otherCritical: WarningSource = { ...critical, summary: 'other critical' };
    expect(buildWarnings([warning, info, critical, second, otherCritical])).toEqual([
      '[CRITICAL] ResourceQuota "compute" is at 95% of cpu - Ask for a larger quota',
      '[CRITICAL] other critical - Ask for a larger quota',
      '[WARNING] NetworkPolicy "deny-in" denies all ingress traffic - Add a policy allowing your ingress',
      '[WARNING] second warning - Add a policy allowing your ingress',
    ]);
  });

  it('removes duplicates, including ones that become equal once shortened', () => {
    const longA: WarningSource = { severity: 'Warning', summary: `${'z'.repeat(300)}A`, remediationHint: '' };
    const longB: WarningSource = { severity: 'Warning', summary: `${'z'.repeat(300)}B`, remediationHint: '' };
    expect(buildWarnings([warning, warning, longA, longB])).toHaveLength(2);
  });

  it('gives no warnings for Info only or nothing', () => {
    expect(buildWarnings([info])).toEqual([]);
    expect(buildWarnings([])).toEqual([]);
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
