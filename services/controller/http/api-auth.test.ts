import request from 'supertest';
import { silentLogger } from '../../logging/logger';
import { KubernetesApiTestServer } from '../../../test/support/kubernetes-api-server';
import {
  demoClusterObjects,
  indexObjects,
  tokenReviewControllerApp,
} from '../../../test/support/controller-fixtures';
import { buildConstraintList } from '../views/constraint-list';
import { tokenExpiryMs, WebhookIdentityCheck, type ReviewToken } from './api-auth';
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

  function jwtExpiringAt(expiryMs: number): string {
    const claims = Buffer.from(JSON.stringify({ exp: Math.floor(expiryMs / 1000) })).toString('base64url');
    return `header.${claims}.signature`;
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
    await check.isWebhook(shortLived);
    expect(reviews).toBe(2);

    const longLived = jwtExpiringAt(now + 3_600_000);
    await check.isWebhook(longLived);
    now += 4 * 60_000;
    await check.isWebhook(longLived);
    expect(reviews).toBe(3);
    now += 61_000;
    await check.isWebhook(longLived);
    expect(reviews).toBe(4);
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

  it('treats a failing TokenReview as "not the webhook" and asks again next time', async () => {
    let calls = 0;
    const check = checkWith(async () => {
      calls += 1;
      throw new Error('connection refused');
    }, Date.now);
    expect(await check.isWebhook('a.b.c')).toBe(false);
    expect(await check.isWebhook('a.b.c')).toBe(false);
    expect(calls).toBe(2);
  });

  it('reads the expiry of a JWT and nothing from text that is not one', () => {
    expect(tokenExpiryMs(jwtExpiringAt(1_700_000_000_000))).toBe(1_700_000_000_000);
    expect(tokenExpiryMs('opaque-token')).toBeUndefined();
    expect(tokenExpiryMs('a.%%%.c')).toBeUndefined();
  });
});
