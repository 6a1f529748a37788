import type { IncomingMessage } from 'node:http';
import { silentLogger } from '../../services/logging/logger';
import { createApiAccess, MAX_CONCURRENT_REVIEWS } from '../../services/controller/http/api-auth';
import { kubernetesTokenReviewer } from '../../services/controller/http/token-review';
import { KubernetesApiTestServer } from '../support/kubernetes-api-server';

// Issue 27: every distinct bogus token cost one outbound TokenReview, failures were not cached, and
// a review abandoned at its 3 s deadline was never cancelled: against a hanging API server, 75
// requests became 375 open sockets. Against the test API server made to hang: reviews are bounded,
// refused without asking when the token's own claims rule it out, and aborted at their deadline.

const WEBHOOK_USER = 'system:serviceaccount:forewarn-system:forewarn-webhook';
const TIMEOUT_MS = 300;

/** A token shaped like the webhook's (its claims name the webhook) that the API server never issued. */
function forgedWebhookToken(serial: number): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const claims = {
    aud: ['forewarn-controller'],
    sub: WEBHOOK_USER,
    exp: Math.floor(Date.now() / 1000) + 600,
    serial,
  };
  return `${encode({ alg: 'RS256' })}.${encode(claims)}.forged${serial}`;
}

function bogusToken(serial: number): string {
  return `not-a-jwt-${serial}`;
}

function requestWith(token: string): IncomingMessage {
  return { headers: { authorization: `Bearer ${token}` } } as IncomingMessage;
}

async function waitFor(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return condition();
}

describe('TokenReviews against a hanging API server', () => {
  const apiServer = new KubernetesApiTestServer();

  beforeAll(() => apiServer.start());
  afterAll(() => apiServer.stop());

  const reviews = () => apiServer.requests.filter((request) => request.path.includes('/tokenreviews')).length;

  function access() {
    return createApiAccess({
      mode: 'tokenreview',
      configuredDetailLevel: 'summary',
      webhookServiceAccount: 'forewarn-system/forewarn-webhook',
      reviewToken: kubernetesTokenReviewer(apiServer.kubeConfig(), {
        timeoutMs: TIMEOUT_MS,
        maxSockets: MAX_CONCURRENT_REVIEWS,
      }),
      logger: silentLogger(),
    });
  }

  it('asks nothing for tokens whose own claims rule them out', async () => {
    const before = reviews();
    const levels = await Promise.all(
      Array.from({ length: 75 }, (_, serial) => access().levelFor(requestWith(bogusToken(serial)))),
    );
    expect(new Set(levels)).toEqual(new Set(['summary']));
    expect(reviews() - before).toBe(0);
  });

  it('75 requests with distinct webhook-shaped tokens: bounded reviews, each aborted at its deadline, no socket left', async () => {
    apiServer.hangNext({ pathIncludes: '/tokenreviews', times: 10_000 });
    const rule = access();
    const before = reviews();
    const baseline = apiServer.openConnections;
    for (let round = 0; round < 5; round++) {
      const levels = await Promise.all(
        Array.from({ length: 75 }, (_, serial) =>
          rule.levelFor(requestWith(forgedWebhookToken(round * 75 + serial))),
        ),
      );
      expect(new Set(levels)).toEqual(new Set(['summary']));
      expect(apiServer.openConnections - baseline).toBeLessThanOrEqual(MAX_CONCURRENT_REVIEWS);
    }
    expect(reviews() - before).toBeLessThanOrEqual(5 * MAX_CONCURRENT_REVIEWS);
    // Every review was aborted at its deadline: the API server sees its sockets close.
    expect(await waitFor(() => apiServer.openConnections === baseline, 2_000)).toBe(true);
  });

  it('asks about a token whose review failed at most once per ten seconds', async () => {
    apiServer.hangNext({ pathIncludes: '/tokenreviews', times: 10_000 });
    const rule = access();
    const before = reviews();
    const token = forgedWebhookToken(999_999);
    for (let attempt = 0; attempt < 5; attempt++)
      expect(await rule.levelFor(requestWith(token))).toBe('summary');
    expect(reviews() - before).toBe(1);
  });

  it("answers the webhook's real token in full from an API server that answers", async () => {
    const answering = new KubernetesApiTestServer();
    await answering.start();
    try {
      const rule = createApiAccess({
        mode: 'tokenreview',
        configuredDetailLevel: 'summary',
        webhookServiceAccount: 'forewarn-system/forewarn-webhook',
        reviewToken: kubernetesTokenReviewer(answering.kubeConfig(), { timeoutMs: TIMEOUT_MS }),
        logger: silentLogger(),
      });
      const token = answering.tokens.issue({
        namespace: 'forewarn-system',
        serviceAccount: 'forewarn-webhook',
        audiences: ['forewarn-controller'],
      });
      expect(await rule.levelFor(requestWith(token))).toBe('full');
      expect(await rule.levelFor(requestWith(forgedWebhookToken(1)))).toBe('summary');
    } finally {
      await answering.stop();
    }
  });
});
