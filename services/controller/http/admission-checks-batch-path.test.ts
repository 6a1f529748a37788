import request from 'supertest';
import { silentLogger } from '../../logging/logger';
import {
  FIXED_NOW,
  indexObjects,
  SHOP_DENY_ALL,
  SHOP_DEPLOYMENT,
  runtimeStateFor,
  syncedSource,
} from '../../../test/support/controller-fixtures';
import { MAX_CHECKS_PER_BATCH } from '../../model/admission-query';
import { createControllerMetrics } from '../metrics';
import { createControllerApp, type ControllerAppDependencies } from './app';
import { ADMISSION_CHECK_BODY_LIMIT_BYTES } from './admission-check-route';
import { splitBatch } from './admission-checks-batch-path';

const deployment = SHOP_DEPLOYMENT;
const denyAll = SHOP_DENY_ALL;

const cluster = indexObjects([denyAll]);
const metrics = createControllerMetrics(cluster.index, () => runtimeStateFor(cluster, syncedSource()), {
  processMetrics: false,
});
function dependencies(levelFor?: () => Promise<'full' | 'summary'>): ControllerAppDependencies {
  return {
    index: cluster.index,
    runtimeState: () => runtimeStateFor(cluster, syncedSource()),
    configuredDetailLevel: 'summary',
    clock: () => FIXED_NOW,
    logger: silentLogger(),
    requestObserver: metrics.requestObserver,
    metricsHandler: metrics.handler,
    apiAccess: levelFor ? { levelFor } : undefined,
  };
}
const app = createControllerApp(dependencies());

const postBatch = (target: typeof app, body: string, type = 'application/x-ndjson') =>
  request(target).post('/api/v1/admission-checks').set('Content-Type', type).send(body);

describe('POST /api/v1/admission-checks: several checks in one request', () => {
  const bodies = [
    JSON.stringify({ object: deployment, operation: 'CREATE' }),
    '{"object": ',
    JSON.stringify({
      object: { ...deployment, metadata: { name: 'other', namespace: 'shop' } },
      operation: 'UPDATE',
      oldObject: deployment,
    }),
    JSON.stringify({ operation: 'CREATE' }),
    JSON.stringify({
      object: { ...deployment, metadata: { namespace: 'Not A Namespace' } },
      operation: 'CREATE',
    }),
  ];

  it('answers every check, in order, with the status and body the single route gives it', async () => {
    const batch = await postBatch(app, `${bodies.join('\n')}\n`).expect(200);
    expect(batch.headers['content-type']).toBe('application/json; charset=utf-8');
    const single = [];
    for (const body of bodies) {
      const answer = await request(app)
        .post('/api/v1/admission-check')
        .set('Content-Type', 'application/json')
        .send(body);
      single.push({ status: answer.status, body: answer.text });
    }
    const answers = (JSON.parse(batch.text) as { answers: Array<{ status: number; body: unknown }> }).answers;
    expect(answers.map((entry) => ({ status: entry.status, body: JSON.stringify(entry.body) }))).toEqual(
      single,
    );
    expect(single.map((answer) => answer.status)).toEqual([200, 400, 200, 400, 400]);
    expect(single[0].body).toContain('default-deny');
  });

  it('answers each check at the level the caller may read, asked once per batch', async () => {
    let asked = 0;
    const guarded = createControllerApp(
      dependencies(() => {
        asked++;
        return Promise.resolve('summary');
      }),
    );
    const batch = await postBatch(guarded, [bodies[0], bodies[2]].join('\n')).expect(200);
    expect(asked).toBe(1);
    const single = await request(guarded)
      .post('/api/v1/admission-check')
      .set('Content-Type', 'application/json')
      .send(bodies[0]);
    const answers = (JSON.parse(batch.text) as { answers: Array<{ body: unknown }> }).answers;
    expect(JSON.stringify(answers[0].body)).toBe(single.text);
    expect(single.text).toContain('"detailLevel":"summary"');
    const unguarded = await postBatch(app, bodies[0]).expect(200);
    expect(unguarded.text).toContain('"detailLevel":"full"');
  });

  it.each([
    ['no check body', '', 400, /at least one check/],
    [
      'too many check bodies',
      Array(MAX_CHECKS_PER_BATCH + 1)
        .fill(bodies[0])
        .join('\n'),
      400,
      /at most 16/,
    ],
  ])('refuses a batch with %s', async (_label, body, status, message) => {
    const answer = await postBatch(app, body).expect(status);
    expect(answer.body).toEqual({ error: expect.stringMatching(message) });
  });

  it('refuses other methods, other body types, compression and oversized batches with a JSON error', async () => {
    const get = await request(app).get('/api/v1/admission-checks').expect(405);
    expect(get.headers.allow).toBe('POST');
    expect(get.body).toEqual({ error: expect.stringMatching(/POST/) });
    for (const type of ['application/json', 'text/plain', 'application/x-ndjson; charset=latin1'])
      expect((await postBatch(app, bodies[0], type).expect(415)).body).toEqual({ error: expect.any(String) });
    const compressed = await request(app)
      .post('/api/v1/admission-checks')
      .set('Content-Type', 'application/x-ndjson')
      .set('Content-Encoding', 'gzip')
      .send(bodies[0])
      .expect(415);
    expect(compressed.body).toEqual({ error: 'a batch of checks must be sent uncompressed' });
    const large = await postBatch(app, 'x'.repeat(ADMISSION_CHECK_BODY_LIMIT_BYTES + 1)).expect(413);
    expect(large.body).toEqual({ error: expect.stringMatching(/at most 1048576 bytes/) });
    // The route keeps serving after every refusal.
    await postBatch(app, bodies[0]).expect(200);
  });

  it('counts its requests in the request metrics under its route', async () => {
    await postBatch(app, bodies[0]).expect(200);
    const text = (await request(app).get('/metrics').expect(200)).text;
    expect(text).toMatch(
      /forewarn_http_requests_total\{route="\/api\/v1\/admission-checks",method="POST",status="200"\} [1-9]/,
    );
  });

  it('splits a batch on its newline bytes, each line decoded whole (multi-byte characters, empty lines)', () => {
    const lines = ['{"note":"é"}', '', '{"note":"日本"}'];
    expect(splitBatch(Buffer.from(`${lines.join('\n')}\n`))).toEqual(lines);
    expect(splitBatch(Buffer.from(lines.join('\n')))).toEqual(lines);
    expect(splitBatch(Buffer.from('\n'))).toEqual(['']);
    expect(splitBatch(Buffer.alloc(0))).toMatch(/at least one/);
    expect(
      splitBatch(
        Buffer.from(
          Array(MAX_CHECKS_PER_BATCH + 1)
            .fill('{}')
            .join('\n'),
        ),
      ),
    ).toMatch(/at most 16/);
    expect(splitBatch(Buffer.from(Array(MAX_CHECKS_PER_BATCH).fill('{}').join('\n')))).toHaveLength(16);
  });
});
