import { generateSelfSignedBundle } from './certs/self-signed';
import { listQueryOf, type ControllerQuery } from '../model/admission-query';
import type { ConstraintQueryResult, ConstraintSource } from './controller-client';
import { parseAdmissionReviewText } from './admission';
import { silentLogger } from '../logging/logger';
import { scheduleWebhookWarmUp, warmUpReview, warmUpWebhook } from './warm-up';

let pair: { certPem: string; keyPem: string };

beforeAll(async () => {
  const bundle = await generateSelfSignedBundle({
    serviceName: 'forewarn-webhook',
    namespace: 'forewarn-system',
    extraSans: ['127.0.0.1'],
    now: new Date(),
  });
  pair = { certPem: bundle.certPem, keyPem: bundle.keyPem };
});

/** A controller that answers every query with `result`, and keeps the queries. */
function recordingSource(result: ConstraintQueryResult): ConstraintSource & { queries: ControllerQuery[] } {
  const queries: ControllerQuery[] = [];
  return { queries, query: (query) => (queries.push(query), Promise.resolve(result)) };
}

const ANSWERED: ConstraintQueryResult = { ok: true, constraints: [], skippedEntries: 0 };

describe('warmUpReview', () => {
  it('is a usable Deployment CREATE review, distinct for each sequence number', () => {
    const first = parseAdmissionReviewText(warmUpReview(0));
    const second = parseAdmissionReviewText(warmUpReview(1));
    expect(first).toMatchObject({ ok: true, request: { operation: 'CREATE', namespace: 'default' } });
    if (!first.ok || !second.ok) throw new Error('not parsed');
    expect(first.request.uid).not.toBe(second.request.uid);
    expect(warmUpReview(0)).not.toBe(warmUpReview(1));
  });
});

describe('warmUpWebhook', () => {
  it('sends its reviews through a listener of its own to the controller, each forwarded whole', async () => {
    const source = recordingSource(ANSWERED);
    const outcome = await warmUpWebhook({
      servingPair: () => pair,
      constraints: source,
      logger: silentLogger(),
      reviews: 12,
    });
    expect(outcome).toMatchObject({ warmed: true, reviews: 12 });
    expect(source.queries).toHaveLength(12);
    expect(new Set(source.queries.map((query) => query.checkBody)).size).toBe(12);
    // Written as the API server writes a review, so they warm the path the API server's reviews take.
    for (const query of source.queries) {
      expect(listQueryOf(query)).toBeUndefined();
      const body = JSON.parse(query.checkBody ?? '') as { view: string; review: { request: unknown } };
      expect(body.view).toBe('warnings');
      expect(body.review.request).toMatchObject({ uid: '', namespace: 'default', operation: 'CREATE' });
    }
  });

  it('stops at the first query the controller does not answer', async () => {
    const source = recordingSource({ ok: false, reason: 'unreachable', detail: 'connection refused' });
    const outcome = await warmUpWebhook({
      servingPair: () => pair,
      constraints: source,
      logger: silentLogger(),
      reviews: 12,
    });
    expect(outcome).toEqual({
      warmed: false,
      reason: 'the controller did not answer: unreachable: connection refused',
    });
    expect(source.queries).toHaveLength(1);
  });

  it('waits for a certificate', async () => {
    const source = recordingSource(ANSWERED);
    const outcome = await warmUpWebhook({
      servingPair: () => null,
      constraints: source,
      logger: silentLogger(),
    });
    expect(outcome).toEqual({ warmed: false, reason: 'no serving certificate yet' });
    expect(source.queries).toHaveLength(0);
  });

  it('stops when its time budget is spent', async () => {
    const source = recordingSource(ANSWERED);
    let clock = 0;
    const outcome = await warmUpWebhook({
      servingPair: () => pair,
      constraints: source,
      logger: silentLogger(),
      reviews: 100,
      budgetMs: 5,
      // Each reading advances 1 ms: the loop reads the clock once per review.
      now: () => clock++,
    });
    expect(outcome).toMatchObject({ warmed: true });
    expect(source.queries.length).toBeLessThan(100);
  });
});

describe('scheduleWebhookWarmUp', () => {
  it('tries again until the controller answers, then stops', async () => {
    let answering = false;
    const queries: ControllerQuery[] = [];
    const source: ConstraintSource = {
      query: (query) => {
        queries.push(query);
        return Promise.resolve(
          answering ? ANSWERED : { ok: false, reason: 'unreachable', detail: 'not yet' },
        );
      },
    };
    const logged: string[] = [];
    const logger = silentLogger();
    logger.info = ((fields: { event: string; warmed: boolean }) => {
      logged.push(`${fields.event} ${fields.warmed}`);
    }) as typeof logger.info;
    const stop = scheduleWebhookWarmUp(
      { servingPair: () => pair, constraints: source, logger, reviews: 3 },
      { retryMs: 20, attempts: 50 },
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(queries.length).toBeGreaterThanOrEqual(1);
    answering = true;
    const deadline = Date.now() + 10_000;
    while (logged.length === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    stop();
    expect(logged).toEqual(['admission_warm_up true']);
  });
});
