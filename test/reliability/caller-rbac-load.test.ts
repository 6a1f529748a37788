import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Report } from '../../services/model/api';
import {
  createCallerReadAccess,
  type CallerReadAccess,
} from '../../services/controller/http/caller-read-access';
import {
  kubernetesAccessReviewer,
  subjectAccessReview,
  type ReviewAccess,
} from '../../services/controller/http/access-review';
import { kubernetesTokenReviewer } from '../../services/controller/http/token-review';
import type { ReviewToken } from '../../services/controller/http/api-auth';
import { silentLogger } from '../../services/logging/logger';
import { KubernetesApiTestServer } from '../support/kubernetes-api-server';
import {
  FIXED_NOW,
  fixtureControllerApp,
  indexObjects,
  runtimeStateFor,
} from '../support/controller-fixtures';
import { answerResourceRequestFor } from '../../services/controller/http/resource-requests';
import { CALLER_RBAC_OBJECTS, READ_KYVERNO_POLICIES } from '../support/caller-rbac-fixtures';

// Issue 24 under load: 1,000 distinct users asking for the same report at once cost a bounded number
// of outbound reviews (TokenReview + SubjectAccessReview), never more than MAX_CONCURRENT at a time;
// against an API server that hangs (the protocol-faithful test server over HTTP), no answer waits
// longer than the review timeout and all are at the controller's level (fail-closed).

const USERS = 1000;
const MAX_CONCURRENT = 16;
const MAX_QUEUED = 512;

/** Counts reviews in flight at the API server, and the most at once. */
function counted<Review extends (...args: never[]) => Promise<unknown>>(
  review: Review,
  gauge: Gauge,
): Review {
  return (async (...args: Parameters<Review>) => {
    gauge.now += 1;
    gauge.max = Math.max(gauge.max, gauge.now);
    try {
      return await review(...args);
    } finally {
      gauge.now -= 1;
    }
  }) as Review;
}

interface Gauge {
  now: number;
  max: number;
}

function controllerFor(apiServer: KubernetesApiTestServer, timeoutMs: number, gauge: Gauge) {
  const kubeConfig = apiServer.kubeConfig();
  const access: CallerReadAccess = createCallerReadAccess({
    reviewToken: counted<ReviewToken>(
      kubernetesTokenReviewer(kubeConfig, { timeoutMs, maxSockets: MAX_CONCURRENT }),
      gauge,
    ),
    reviewAccess: counted<ReviewAccess>(
      kubernetesAccessReviewer(kubeConfig, { timeoutMs, maxSockets: MAX_CONCURRENT }),
      gauge,
    ),
    ttlMs: 60_000,
    timeoutMs,
    maxConcurrentReviews: MAX_CONCURRENT,
    maxQueuedReviews: MAX_QUEUED,
    logger: silentLogger(),
  });
  const app = fixtureControllerApp(indexObjects(CALLER_RBAC_OBJECTS), {
    configuredDetailLevel: 'summary',
    callerReadAccess: access,
  });
  return { access, app };
}

async function listen(app: (request: IncomingMessage, response: import('node:http').ServerResponse) => void) {
  const server = await new Promise<Server>((resolve) => {
    const listening = createServer(app).listen(0, '127.0.0.1', () => resolve(listening));
  });
  const address = server.address();
  return { server, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` };
}

/** Every token asks for the `shop` report at once; the levels of the shop Policy's entry and the slowest answer. */
async function burst(url: string, tokens: readonly string[]) {
  const started = Date.now();
  const levels = await Promise.all(
    tokens.map(async (token) => {
      const response = await fetch(`${url}/resources/reports/shop`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(response.status).toBe(200);
      const report = (await response.json()) as Report;
      return report.constraints.find((entry) => entry.name.startsWith('shop-team'))?.detailLevel;
    }),
  );
  return { levels, elapsedMs: Date.now() - started };
}

const reviewsAt = (apiServer: KubernetesApiTestServer) => ({
  tokenReviews: apiServer.tokens.reviews.length,
  accessReviews: apiServer.access.reviews.length,
});

/**
 * The API server's review APIs answered in process after `latencyMs` (the test server's own
 * TokenReview and SubjectAccessReview logic, without HTTP), so the figure counts the controller's
 * reviews and not the machine's sockets.
 */
function inProcessReviewers(apiServer: KubernetesApiTestServer, latencyMs: number, gauge: Gauge) {
  const later = <T>(answer: () => T) =>
    new Promise<T>((resolve) => setTimeout(() => resolve(answer()), latencyMs));
  const reviewToken: ReviewToken = counted<ReviewToken>(async (token) => {
    const status = (await later(() => apiServer.tokens.review({ spec: { token } }))).status as {
      authenticated?: boolean;
      user?: { username: string; uid: string; groups: string[] };
    };
    return { authenticated: status.authenticated === true, ...status.user };
  }, gauge);
  const reviewAccess: ReviewAccess = counted<ReviewAccess>(async (caller, access) => {
    const review = await later(() =>
      apiServer.access.review(
        subjectAccessReview(caller, access) as Parameters<typeof apiServer.access.review>[0],
      ),
    );
    return (review.status as { allowed?: boolean }).allowed === true;
  }, gauge);
  return { reviewToken, reviewAccess };
}

describe(`${USERS} distinct users asking for the same report at once`, () => {
  const apiServer = new KubernetesApiTestServer();
  const gauge: Gauge = { now: 0, max: 0 };
  const tokens: string[] = [];
  const cluster = indexObjects(CALLER_RBAC_OBJECTS);
  const dependencies = {
    index: cluster.index,
    runtimeState: () => runtimeStateFor(cluster),
    configuredDetailLevel: 'summary' as const,
    clock: () => FIXED_NOW,
  };
  let access: CallerReadAccess;

  beforeAll(() => {
    // Half of them may read shop's Kyverno Policies through a group.
    apiServer.access.grant({
      subject: { kind: 'Group', name: 'readers' },
      namespace: 'shop',
      rules: READ_KYVERNO_POLICIES,
    });
    for (let user = 0; user < USERS; user += 1)
      tokens.push(
        apiServer.tokens.issueUserToken({
          username: `user-${user}`,
          groups: user % 2 === 0 ? ['readers'] : [],
        }),
      );
    access = createCallerReadAccess({
      ...inProcessReviewers(apiServer, 5, gauge),
      ttlMs: 60_000,
      timeoutMs: 2000,
      maxConcurrentReviews: MAX_CONCURRENT,
      maxQueuedReviews: MAX_QUEUED,
      logger: silentLogger(),
    });
  });

  /** Every token asks for the `shop` report at once, through the code behind GET /resources/reports. */
  async function reportsAtOnce() {
    const started = Date.now();
    const levels = await Promise.all(
      tokens.map(async (token) => {
        const request = { headers: { authorization: `Bearer ${token}` } } as IncomingMessage;
        const answer = await answerResourceRequestFor(
          dependencies,
          { resource: 'reports', params: { namespace: 'shop' } },
          [],
          (constraints) => access.readableConstraints(request, constraints),
        );
        expect(answer.status).toBe(200);
        const report = answer.body as Report;
        return report.constraints.find((entry) => entry.name.startsWith('shop-team'))?.detailLevel;
      }),
    );
    return { levels, elapsedMs: Date.now() - started, reviews: { ...reviewsAt(apiServer) } };
  }

  it('cost a bounded number of reviews, at most MAX_CONCURRENT at a time, and a second burst only what the first could not ask', async () => {
    const first = await reportsAtOnce();
    const refusedFirst = access.reviewCounts().refused;
    const second = await reportsAtOnce();
    const figures = {
      users: USERS,
      first: {
        ...first.reviews,
        refused: refusedFirst,
        elapsedMs: first.elapsedMs,
        full: count(first.levels, 'full'),
      },
      second: {
        tokenReviews: second.reviews.tokenReviews - first.reviews.tokenReviews,
        accessReviews: second.reviews.accessReviews - first.reviews.accessReviews,
        elapsedMs: second.elapsedMs,
        full: count(second.levels, 'full'),
      },
      maxInFlight: gauge.max,
    };
    process.stdout.write(`caller-rbac load figures: ${JSON.stringify(figures)}\n`);
    expect(gauge.max).toBeLessThanOrEqual(MAX_CONCURRENT);
    // Per user at most one TokenReview and, for the two constraints of shop (two collections, two
    // names), at most four SubjectAccessReviews; what the queue could not hold was refused unasked.
    expect(first.reviews.tokenReviews).toBeLessThanOrEqual(USERS);
    expect(first.reviews.accessReviews).toBeLessThanOrEqual(4 * USERS);
    // Only readers ever see the Policy in full, whatever the load.
    for (const levels of [first.levels, second.levels])
      levels.forEach((level, user) => {
        if (user % 2 === 1) expect(level).toBe('summary');
      });
    // Cached answers: the second burst asks only about what the first could not.
    expect(figures.second.tokenReviews + figures.second.accessReviews).toBeLessThanOrEqual(refusedFirst);
    expect(figures.second.full).toBeGreaterThanOrEqual(figures.first.full);
  }, 60_000);
});

function count(levels: ReadonlyArray<string | undefined>, level: string): number {
  return levels.filter((each) => each === level).length;
}

it('answers every caller within the review timeout, at summary, when the API server hangs', async () => {
  const apiServer = new KubernetesApiTestServer();
  await apiServer.start();
  const gauge: Gauge = { now: 0, max: 0 };
  const timeoutMs = 500;
  const { app } = controllerFor(apiServer, timeoutMs, gauge);
  const { server, url } = await listen(app);
  try {
    apiServer.access.grant({ subject: { kind: 'User', name: 'user-0' }, rules: READ_KYVERNO_POLICIES });
    const tokens = Array.from({ length: 200 }, (_, user) =>
      apiServer.tokens.issueUserToken({ username: `user-${user}` }),
    );
    apiServer.hangNext({ pathIncludes: 'reviews', times: 100_000 });
    const answered = await burst(url, tokens);
    process.stdout.write(
      `caller-rbac hanging API server: ${JSON.stringify({ users: tokens.length, elapsedMs: answered.elapsedMs, maxInFlight: gauge.max })}\n`,
    );
    expect(answered.levels.every((level) => level === 'summary')).toBe(true);
    expect(answered.elapsedMs).toBeLessThan(timeoutMs + 1500);
    expect(gauge.max).toBeLessThanOrEqual(MAX_CONCURRENT);
  } finally {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    await apiServer.stop();
  }
});
