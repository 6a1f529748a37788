import {
  generateSelfSignedBundle,
  type CertificateBundle,
} from '../../../services/webhook/certs/self-signed';
import type { ConstraintQueryResult, ConstraintSource } from '../../../services/webhook/controller-client';
import { listQueryOf, type ControllerQuery } from '../../../services/model/admission-query';
import { admissionReview, startWebhook, tlsRequest } from './harness';
import { KINDS, QUOTA, QUOTA_WARNING } from './review-fixtures';

// The webhook hands a review written the API server's way to the controller whole
// (model/forwarded-review.ts); when the controller declines it (nothing to check) or cannot read it
// (an older controller), the webhook reads the review itself and asks as before. Whether the two
// paths answer alike over real reviews: test/integration/webhook/recorded-answers.test.ts.

let bundle: CertificateBundle;

beforeAll(async () => {
  bundle = await generateSelfSignedBundle({
    serviceName: 'forewarn-webhook',
    namespace: 'forewarn-system',
    extraSans: ['127.0.0.1'],
    now: new Date(),
  });
});

describe('reviews forwarded whole to the controller (issue 33)', () => {
  /** A controller that answers forwarded reviews with `forwardedAnswer` and any other query with QUOTA. */
  function decliningSource(
    forwardedAnswer: ConstraintQueryResult,
  ): ConstraintSource & { queries: ControllerQuery[] } {
    const queries: ControllerQuery[] = [];
    return {
      queries,
      query: async (query) => {
        queries.push(query);
        if (listQueryOf(query) === undefined && query.checkBody?.startsWith('{"view":"warnings","review":'))
          return forwardedAnswer;
        return { ok: true, constraints: [QUOTA], skippedEntries: 0 };
      },
    };
  }

  it.each([
    ['declines it (422: nothing to check)', 422],
    ['cannot read it (400: an older controller)', 400],
  ])('reads the review itself when the controller %s', async (_label, status) => {
    const source = decliningSource({ ok: false, reason: 'bad_status', detail: `HTTP ${status}`, status });
    const running = await startWebhook({ constraints: source, certificate: bundle });
    try {
      const response = await tlsRequest({
        port: running.port,
        ca: bundle.caPem,
        body: admissionReview(KINDS.Pod.target, 'CREATE', 'uid-declined'),
      });
      expect(JSON.parse(response.text).response).toEqual({
        uid: 'uid-declined',
        allowed: true,
        warnings: [QUOTA_WARNING],
      });
      // The forwarded review first, then the webhook's own check body for it.
      expect(source.queries).toHaveLength(2);
      expect(JSON.parse(source.queries[1].checkBody ?? '')).toMatchObject({
        operation: 'CREATE',
        view: 'warnings',
        object: { kind: 'Pod', metadata: { namespace: 'shop' } },
      });
    } finally {
      await running.close();
    }
  });

  it('does not ask again when the controller fails otherwise, and allows without warnings', async () => {
    const source = decliningSource({ ok: false, reason: 'bad_status', detail: 'HTTP 500', status: 500 });
    const running = await startWebhook({ constraints: source, certificate: bundle });
    try {
      const response = await tlsRequest({
        port: running.port,
        ca: bundle.caPem,
        body: admissionReview(KINDS.Pod.target, 'CREATE', 'uid-failed'),
      });
      expect(JSON.parse(response.text).response).toEqual({ uid: 'uid-failed', allowed: true, warnings: [] });
      expect(source.queries).toHaveLength(1);
    } finally {
      await running.close();
    }
  });
});
