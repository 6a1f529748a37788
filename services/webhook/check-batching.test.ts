import { MAX_CHECK_BODY_BYTES, MAX_CHECKS_PER_BATCH, type ControllerQuery } from '../model/admission-query';
import { BATCHES_REFUSED_PAUSE_MS, batchConcurrentChecks } from './check-batching';
import type { CheckBatchClient, ConstraintQueryResult } from './controller-client';

/** The answer the fake controller gives a check body: one constraint named after it. */
function answerFor(body: string): ConstraintQueryResult {
  return {
    ok: true,
    constraints: [{ name: body, severity: 'Warning', summary: `about ${body}`, remediationHint: '' }],
    skippedEntries: 0,
  };
}

interface Call {
  kind: 'single' | 'batch' | 'list';
  bodies: string[];
  timeoutMs?: number;
  answer: (results?: ConstraintQueryResult[]) => void;
}

/** A controller whose requests are answered when the test says so, recording what was sent. */
function fakeController() {
  const calls: Call[] = [];
  const client: CheckBatchClient = {
    query(query: ControllerQuery, timeoutMs?: number) {
      return new Promise((resolve) => {
        const body = query.checkBody;
        calls.push({
          kind: body === undefined ? 'list' : 'single',
          bodies: body === undefined ? [] : [body],
          timeoutMs,
          answer: (results) => resolve(results?.[0] ?? answerFor(body ?? 'list')),
        });
      });
    },
    queryChecks(checkBodies, timeoutMs) {
      return new Promise((resolve) => {
        calls.push({
          kind: 'batch',
          bodies: [...checkBodies],
          timeoutMs,
          answer: (results) => resolve(results ?? checkBodies.map(answerFor)),
        });
      });
    },
    close: () => Promise.resolve(),
  };
  return { client, calls };
}

/** Lets the promise callbacks run (the release after an answer sends what waited). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

const check = (body: string): ControllerQuery => ({ checkBody: body });
const names = (result: ConstraintQueryResult) =>
  result.ok ? result.constraints.map((each) => each.name) : result;

describe('checks in flight together (check-batching.ts)', () => {
  it('sends a check that finds nothing in flight at once, alone, with the client deadline', async () => {
    const { client, calls } = fakeController();
    const batching = batchConcurrentChecks(client);
    const answered = batching.query(check('a'));
    expect(calls.map((call) => [call.kind, call.bodies, call.timeoutMs])).toEqual([
      ['single', ['a'], undefined],
    ]);
    calls[0].answer();
    expect(names(await answered)).toEqual(['a']);
    // The next one, after the first was answered, is alone again.
    const next = batching.query(check('b'));
    await settle();
    expect(calls.map((call) => call.kind)).toEqual(['single', 'single']);
    calls[1].answer();
    expect(names(await next)).toEqual(['b']);
  });

  it('sends the checks that arrived while one was in flight as one batch, in order, each with its own answer', async () => {
    const { client, calls } = fakeController();
    const batchSizes: number[] = [];
    const batching = batchConcurrentChecks(client, { observeBatch: (checks) => batchSizes.push(checks) });
    const first = batching.query(check('a'));
    const waiting = ['b', 'c', 'd'].map((body) => batching.query(check(body)));
    await settle();
    expect(calls).toHaveLength(1);
    calls[0].answer();
    await settle();
    expect(calls.map((call) => [call.kind, call.bodies])).toEqual([
      ['single', ['a']],
      ['batch', ['b', 'c', 'd']],
    ]);
    expect(batchSizes).toEqual([3]);
    // The batch is sent with what the oldest waiting check has left of its 3 s.
    expect(calls[1].timeoutMs).toBeGreaterThan(2_000);
    expect(calls[1].timeoutMs).toBeLessThanOrEqual(3_000);
    calls[1].answer([
      answerFor('b'),
      { ok: false, reason: 'bad_status', detail: 'HTTP 422', status: 422 },
      answerFor('d'),
    ]);
    expect((await Promise.all([first, ...waiting])).map(names)).toEqual([
      ['a'],
      ['b'],
      { ok: false, reason: 'bad_status', detail: 'HTTP 422', status: 422 },
      ['d'],
    ]);
  });

  it('sends one waiting check alone on the single route', async () => {
    const { client, calls } = fakeController();
    const batching = batchConcurrentChecks(client);
    void batching.query(check('a'));
    const second = batching.query(check('b'));
    calls[0].answer();
    await settle();
    expect(calls.map((call) => call.kind)).toEqual(['single', 'single']);
    expect(calls[1].timeoutMs).toBeGreaterThan(2_000);
    calls[1].answer();
    expect(names(await second)).toEqual(['b']);
  });

  it(`puts at most ${MAX_CHECKS_PER_BATCH} checks and ${MAX_CHECK_BODY_BYTES} bytes in a batch; the rest go next`, async () => {
    const { client, calls } = fakeController();
    const batching = batchConcurrentChecks(client);
    void batching.query(check('first'));
    const bodies = Array.from({ length: MAX_CHECKS_PER_BATCH + 2 }, (_, index) => `check-${index}`);
    const answers = bodies.map((body) => batching.query(check(body)));
    calls[0].answer();
    await settle();
    expect(calls[1].bodies).toEqual(bodies.slice(0, MAX_CHECKS_PER_BATCH));
    calls[1].answer();
    await settle();
    expect(calls[2].bodies).toEqual(bodies.slice(MAX_CHECKS_PER_BATCH));
    calls[2].answer();
    expect((await Promise.all(answers)).map(names)).toEqual(bodies.map((body) => [body]));

    // By size: two bodies of half the limit do not share a batch.
    const half = 'x'.repeat(MAX_CHECK_BODY_BYTES / 2);
    await settle();
    void batching.query(check('again'));
    const large = [batching.query(check(`1${half}`)), batching.query(check(`2${half}`))];
    calls[3].answer();
    await settle();
    expect(calls.slice(4).map((call) => call.bodies.map((body) => body[0]))).toEqual([['1']]);
    calls[4].answer();
    await settle();
    expect(calls.slice(5).map((call) => call.bodies.map((body) => body[0]))).toEqual([['2']]);
    calls[5].answer();
    await Promise.all(large);
  });

  it('never puts a body with a raw newline, or one too large to share, in a batch: it goes at once', async () => {
    const { client, calls } = fakeController();
    const batching = batchConcurrentChecks(client);
    void batching.query(check('a'));
    void batching.query(check('{"object":\n{}}'));
    void batching.query(check('y'.repeat(MAX_CHECK_BODY_BYTES)));
    void batching.query({ namespace: 'shop', resource: null, labels: null });
    expect(calls.map((call) => call.kind)).toEqual(['single', 'single', 'single', 'list']);
  });

  it('fails a waiting check whose deadline passed while it waited, without sending it', async () => {
    let clock = 0;
    const { client, calls } = fakeController();
    const batching = batchConcurrentChecks(client, { timeoutMs: 100, now: () => clock });
    void batching.query(check('a'));
    const late = batching.query(check('b'));
    clock = 150;
    calls[0].answer();
    expect(await late).toEqual({ ok: false, reason: 'timeout', detail: 'no answer within 100 ms' });
    expect(calls).toHaveLength(1);
  });

  it('gives every check of a batch the failure of its request (fail-open follows per review)', async () => {
    const { client, calls } = fakeController();
    const batching = batchConcurrentChecks(client);
    void batching.query(check('a'));
    const waiting = ['b', 'c'].map((body) => batching.query(check(body)));
    calls[0].answer();
    await settle();
    const failure: ConstraintQueryResult = {
      ok: false,
      reason: 'timeout',
      detail: 'no complete answer within 3000 ms',
    };
    calls[1].answer([failure, failure]);
    expect(await Promise.all(waiting)).toEqual([failure, failure]);
  });

  it('sends each check alone when the controller has no batch route (an older one), and batches no more for a while', async () => {
    let clock = 0;
    const { client, calls } = fakeController();
    const batching = batchConcurrentChecks(client, { now: () => clock });
    void batching.query(check('a'));
    const waiting = ['b', 'c'].map((body) => batching.query(check(body)));
    calls[0].answer();
    await settle();
    const missing: ConstraintQueryResult = {
      ok: false,
      reason: 'bad_status',
      detail: 'HTTP 404',
      status: 404,
    };
    calls[1].answer([missing, missing]);
    await settle();
    expect(calls.slice(2).map((call) => [call.kind, call.bodies])).toEqual([
      ['single', ['b']],
      ['single', ['c']],
    ]);
    calls[2].answer();
    calls[3].answer();
    expect((await Promise.all(waiting)).map(names)).toEqual([['b'], ['c']]);

    // While batches are refused, concurrent checks go at once, alone.
    void batching.query(check('d'));
    void batching.query(check('e'));
    expect(calls.slice(4).map((call) => call.kind)).toEqual(['single', 'single']);
    // After the pause, checks wait together again.
    clock = BATCHES_REFUSED_PAUSE_MS + 1;
    calls[4].answer();
    calls[5].answer();
    await settle();
    void batching.query(check('f'));
    void batching.query(check('g'));
    expect(calls.slice(6).map((call) => call.bodies)).toEqual([['f']]);
  });
});
