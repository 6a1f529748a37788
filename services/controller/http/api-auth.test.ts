import request from 'supertest';
import { silentLogger } from '../../logging/logger';
import { KubernetesApiTestServer } from '../../../test/support/kubernetes-api-server';
import {
  demoClusterObjects,
  indexObjects,
  tokenReviewControllerApp,
} from '../../../test/support/controller-fixtures';
import { buildConstraintList } from '../views/constraint-list';
import {
  FAILED_REVIEW_CACHE_MS,
  MAX_CONCURRENT_REVIEWS,
  tokenExpiryMs,
  WebhookIdentityCheck,
  type ReviewToken,
} from './api-auth';
import { createControllerApp } from './app';

// `--api-auth=tokenreview` (issue 13 item 5, DESIGN.md 5): `/api/v1/constraints` is unredacted for
// the webhook's projected token alone, checked with a real TokenReview call against the test API
// server; every other caller gets the answer at the controller's detail level, never a refusal.

const demo = indexObjects(demoClusterObjects());
const WEBHOOK = { namespace: 'forewarn-system', serviceAccount: 'forewarn-webhook' };
const query = { namespace: 'shop' };
const redacted = JSON.parse(JSON.stringify(buildConstraintList(demo.index, query, [], 'summary'))) as unknown;
const unredacted = JSON.parse(JSON.stringify(buildConstraintList(demo.index, query, [], 'full'))) as unknown;

describe('/api/v1/constraints with --api-auth=tokenreview', () => {
  const apiServer = new KubernetesApiTestServer();
  let app: ReturnType<typeof createControllerApp>;

  beforeAll(async () => {
    await apiServer.start();
    app = tokenReviewControllerApp(demo, apiServer, `${WEBHOOK.namespace}/${WEBHOOK.serviceAccount}`);
  });

  afterAll(async () => {
    await apiServer.stop();
  });

  const list = (authorization?: string) => {
    const call = request(app).get('/api/v1/constraints?namespace=shop');
    return (authorization ? call.set('Authorization', authorization) : call).expect(200);
  };

  it('the redacted and the unredacted answers differ on the demo cluster (the test means something)', () => {
    expect(redacted).not.toEqual(unredacted);
  });

  it("answers the webhook's token unredacted, asking the API server once per token", async () => {
    const token = apiServer.tokens.issue({ ...WEBHOOK, audiences: ['forewarn-controller'] });
    const reviewsBefore = apiServer.tokens.reviews.length;
    expect((await list(`Bearer ${token}`)).body).toEqual(unredacted);
    expect((await list(`Bearer ${token}`)).body).toEqual(unredacted);
    expect(apiServer.tokens.reviews.slice(reviewsBefore)).toEqual([
      { audiences: ['forewarn-controller'], authenticated: true },
    ]);
  });

  it('answers a caller without a token redacted at the detail level, as /resources would', async () => {
    expect((await list()).body).toEqual(redacted);
    expect((await list('Basic dXNlcjpwYXNz')).body).toEqual(redacted);
  });

  it('answers redacted for the token of another ServiceAccount, even with the right audience', async () => {
    const token = apiServer.tokens.issue({
      namespace: 'shop',
      serviceAccount: 'default',
      audiences: ['forewarn-controller'],
    });
    expect((await list(`Bearer ${token}`)).body).toEqual(redacted);
  });

  it("answers redacted for the webhook's ordinary API token (another audience)", async () => {
    const token = apiServer.tokens.issue(WEBHOOK);
    expect((await list(`Bearer ${token}`)).body).toEqual(redacted);
  });

  it('applies the same rule to /api/v1/admission-check', async () => {
    const token = apiServer.tokens.issue({ ...WEBHOOK, audiences: ['forewarn-controller'] });
    const body = {
      operation: 'CREATE',
      object: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'shop' },
        spec: { template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c' }] } } },
      },
    };
    const check = (authorization?: string) => {
      const call = request(app).post('/api/v1/admission-check').send(body);
      return (authorization ? call.set('Authorization', authorization) : call).expect(200);
    };
    const namesIn = (answer: request.Response) => JSON.stringify(answer.body);
    expect(namesIn(await check(`Bearer ${token}`))).toContain('block-cloud-metadata');
    const anonymous = namesIn(await check());
    expect(anonymous).not.toContain('block-cloud-metadata');
    expect(anonymous).toContain('redacted');
  });

  it('answers redacted for a made-up or expired token', async () => {
    expect((await list('Bearer not.a.token')).body).toEqual(redacted);
    const expired = apiServer.tokens.issue({
      ...WEBHOOK,
      audiences: ['forewarn-controller'],
      expirationSeconds: -1,
    });
    expect((await list(`Bearer ${expired}`)).body).toEqual(redacted);
  });
});

describe('WebhookIdentityCheck', () => {
  const webhookUser = 'system:serviceaccount:forewarn-system:forewarn-webhook';

  /** A token shaped like the webhook's projected one (the claims are what the API server would sign). */
  function jwtExpiringAt(expiryMs: number, claims: Record<string, unknown> = {}): string {
    const payload = Buffer.from(
      JSON.stringify({
        aud: ['forewarn-controller'],
        sub: webhookUser,
        exp: Math.floor(expiryMs / 1000),
        ...claims,
      }),
    ).toString('base64url');
    return `header.${payload}.signature`;
  }

  function checkWith(reviewToken: ReviewToken, clock: () => number) {
    return new WebhookIdentityCheck({
      mode: 'tokenreview',
      configuredDetailLevel: 'summary',
      webhookServiceAccount: 'forewarn-system/forewarn-webhook',
      reviewToken,
      logger: silentLogger(),
      clock,
    });
  }

  it('trusts a review until the token expires, and never longer than five minutes', async () => {
    let now = 1_000_000_000_000;
    let reviews = 0;
    const check = checkWith(
      async () => {
        reviews += 1;
        return { authenticated: true, username: webhookUser, audiences: ['forewarn-controller'] };
      },
      () => now,
    );
    const shortLived = jwtExpiringAt(now + 60_000);
    expect(await check.isWebhook(shortLived)).toBe(true);
    now += 59_000;
    expect(await check.isWebhook(shortLived)).toBe(true);
    expect(reviews).toBe(1);
    now += 2_000;
    // Expired: no longer trusted, and not worth asking about.
    expect(await check.isWebhook(shortLived)).toBe(false);
    expect(reviews).toBe(1);

    const longLived = jwtExpiringAt(now + 3_600_000);
    await check.isWebhook(longLived);
    now += 4 * 60_000;
    await check.isWebhook(longLived);
    expect(reviews).toBe(2);
    now += 61_000;
    await check.isWebhook(longLived);
    expect(reviews).toBe(3);
  });

  it('asks once for concurrent requests with the same token', async () => {
    let reviews = 0;
    const check = checkWith(async () => {
      reviews += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
      return { authenticated: true, username: webhookUser };
    }, Date.now);
    const token = jwtExpiringAt(Date.now() + 60_000);
    expect(
      await Promise.all([check.isWebhook(token), check.isWebhook(token), check.isWebhook(token)]),
    ).toEqual([true, true, true]);
    expect(reviews).toBe(1);
  });

  it('treats a failing TokenReview as "not the webhook" for ten seconds, then asks again', async () => {
    let now = 1_000_000_000_000;
    let calls = 0;
    const check = checkWith(
      async () => {
        calls += 1;
        throw new Error('connection refused');
      },
      () => now,
    );
    const token = jwtExpiringAt(now + 3_600_000);
    expect(await check.isWebhook(token)).toBe(false);
    now += FAILED_REVIEW_CACHE_MS - 1;
    expect(await check.isWebhook(token)).toBe(false);
    expect(calls).toBe(1);
    now += 2;
    expect(await check.isWebhook(token)).toBe(false);
    expect(calls).toBe(2);
  });

  it.each([
    ['not a JWT', 'opaque-token'],
    ['a JWT of another ServiceAccount', { sub: 'system:serviceaccount:shop:default' }],
    ['a JWT for another audience', { aud: ['https://kubernetes.default.svc'] }],
    ['a JWT without audience', { aud: undefined }],
    ['an expired JWT', { exp: 1 }],
  ])('answers %s "not the webhook" without asking the API server', async (_label, shape) => {
    let calls = 0;
    const check = checkWith(async () => {
      calls += 1;
      return { authenticated: true, username: webhookUser, audiences: ['forewarn-controller'] };
    }, Date.now);
    const token = typeof shape === 'string' ? shape : jwtExpiringAt(Date.now() + 60_000, shape);
    expect(await check.isWebhook(token)).toBe(false);
    expect(calls).toBe(0);
  });

  it(`runs at most ${MAX_CONCURRENT_REVIEWS} reviews at once; more distinct tokens are answered redacted at once`, async () => {
    let started = 0;
    const release: Array<() => void> = [];
    const check = checkWith(async () => {
      started += 1;
      await new Promise<void>((resolve) => release.push(resolve));
      return { authenticated: false };
    }, Date.now);
    const answers = Array.from({ length: MAX_CONCURRENT_REVIEWS * 5 }, (_, at) =>
      check.isWebhook(jwtExpiringAt(Date.now() + 60_000, { jti: String(at) })),
    );
    const extra = await Promise.all(answers.slice(MAX_CONCURRENT_REVIEWS));
    expect(extra.every((answer) => answer === false)).toBe(true);
    expect(started).toBe(MAX_CONCURRENT_REVIEWS);
    expect(check.reviewsInFlight()).toBe(MAX_CONCURRENT_REVIEWS);
    for (const resolve of release) resolve();
    await Promise.all(answers);
    expect(check.reviewsInFlight()).toBe(0);
  });

  it('reads the expiry of a JWT and nothing from text that is not one', () => {
    expect(tokenExpiryMs(jwtExpiringAt(1_700_000_000_000))).toBe(1_700_000_000_000);
    expect(tokenExpiryMs('opaque-token')).toBeUndefined();
    expect(tokenExpiryMs('a.%%%.c')).toBeUndefined();
  });
});
