import request from 'supertest';
import type { ConstraintDraft } from '../../model/constraint';
import { DETAIL_LEVELS } from '../../model/api';
import {
  fixtureControllerApp,
  indexObjects,
  runtimeStateFor,
} from '../../../test/support/controller-fixtures';
import { createAdmissionCheckAnswerer } from './admission-check-route';
import { noteClockBoundOutcome } from '../verdicts/guard/evaluation-guard';
import {
  ADMISSION_MEMO_MAX_BODY_BYTES,
  ADMISSION_MEMO_PREFIX_CHARACTERS,
  AdmissionCheckMemo,
} from './admission-check-memo';

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop' },
  spec: {
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'web:1' }] },
    },
  },
};

const denyAll = {
  apiVersion: 'networking.k8s.io/v1',
  kind: 'NetworkPolicy',
  metadata: { name: 'default-deny', namespace: 'shop' },
  spec: { podSelector: {}, policyTypes: ['Ingress'] },
};

type Checked = { constraints: Array<{ name: string }> };

describe('admission-check memo', () => {
  it('keeps at most its bound of entries, dropping the oldest half first', () => {
    const memo = new AdmissionCheckMemo(4);
    for (const body of ['a', 'b', 'c', 'd', 'e']) memo.remember('r1', body, `answer ${body}`);
    expect(memo.size).toBeLessThanOrEqual(4);
    expect(memo.lookup('r1', 'a')).toBeUndefined();
    expect(memo.lookup('r1', 'b')).toBeUndefined();
    // The two before the last are still kept.
    expect(memo.lookup('r1', 'c')).toBe('answer c');
    expect(memo.lookup('r1', 'd')).toBe('answer d');
    expect(memo.lookup('r1', 'e')).toBe('answer e');
    for (let index = 0; index < 100; index++) memo.remember('r1', `body ${index}`, 'answer');
    expect(memo.size).toBeLessThanOrEqual(4);
  });

  it('keeps one entry per body however often it is remembered', () => {
    const memo = new AdmissionCheckMemo(4);
    for (let times = 0; times < 10; times++) memo.remember('r1', 'a', 'answer a');
    memo.remember('r1', 'b', 'answer b');
    expect(memo.size).toBe(2);
    expect(memo.lookup('r1', 'a')).toBe('answer a');
  });

  it('keeps the answers for each viewer level of one body apart, in one entry', () => {
    const memo = new AdmissionCheckMemo(4);
    memo.remember('r1', 'a', 'full answer', 'full');
    expect(memo.lookup('r1', 'a', 'summary')).toBeUndefined();
    expect(memo.has('r1', 'a', 'summary')).toBe(false);
    memo.remember('r1', 'a', 'summary answer', 'summary');
    expect(memo.lookup('r1', 'a', 'full')).toBe('full answer');
    expect(memo.lookup('r1', 'a', 'summary')).toBe('summary answer');
    expect(memo.size).toBe(1);
    // A body of the older generation gains a level there, without a second entry.
    memo.remember('r1', 'b', 'b', 'full');
    memo.remember('r1', 'c', 'c', 'full');
    memo.remember('r1', 'a', 'names answer', 'names');
    expect(memo.size).toBe(3);
    expect(memo.lookup('r1', 'a', 'names')).toBe('names answer');
    expect(memo.has('r2', 'a', 'full')).toBe(false);
    expect(memo.lookup('r1', 'a', 'full')).toBe('full answer');
  });

  it('forgets every answer when the state changes, and never keeps oversized bodies', () => {
    const memo = new AdmissionCheckMemo();
    memo.remember('r1', 'a', 'old');
    expect(memo.lookup('r2', 'a')).toBeUndefined();
    expect(memo.size).toBe(0);
    memo.remember('r2', 'x'.repeat(ADMISSION_MEMO_MAX_BODY_BYTES + 1), 'big');
    expect(memo.size).toBe(0);
  });

  it('tells apart bodies that share their first kilobyte, and finds equal bodies made apart', () => {
    const memo = new AdmissionCheckMemo();
    const shared = 'p'.repeat(ADMISSION_MEMO_PREFIX_CHARACTERS + 10);
    memo.remember('r1', `${shared}-first`, 'first answer');
    memo.remember('r1', `${shared}-second`, 'second answer');
    // Strings built apart (as every request body is), equal in content to the remembered ones.
    expect(memo.lookup('r1', [shared, '-first'].join(''))).toBe('first answer');
    expect(memo.lookup('r1', [shared, '-second'].join(''))).toBe('second answer');
    expect(memo.lookup('r1', `${shared}-third`)).toBeUndefined();
    expect(memo.has('r1', `${shared}-first`)).toBe(true);
    // A body shorter than the prefix is its own prefix.
    memo.remember('r1', 'short', 'short answer');
    expect(memo.lookup('r1', ['sho', 'rt'].join(''))).toBe('short answer');
    expect(memo.lookup('r1', 'shor')).toBeUndefined();
    expect(memo.size).toBe(3);
  });

  it('answers an identical body anew once the index revision changed', async () => {
    const cluster = indexObjects([]);
    const app = fixtureControllerApp(cluster, { configuredDetailLevel: 'summary' });
    const check = async () =>
      (await request(app).post('/api/v1/admission-check').send({ object: deployment }).expect(200))
        .body as Checked;
    expect((await check()).constraints).toEqual([]);
    expect((await check()).constraints).toEqual([]);
    cluster.ingestor.upsert(denyAll);
    expect((await check()).constraints.map((entry) => entry.name)).toContain('default-deny');
  });

  it('reuses an answer until the prospective findings may change', async () => {
    const cluster = indexObjects([denyAll]);
    let evaluations = 0;
    let inventoryRevision = 0;
    const app = fixtureControllerApp(cluster, {
      configuredDetailLevel: 'summary',
      prospectiveFindings: (): ConstraintDraft[] => {
        evaluations++;
        return [];
      },
      prospectiveRevision: () => inventoryRevision,
    });
    const check = () => request(app).post('/api/v1/admission-check').send({ object: deployment }).expect(200);
    const first = await check();
    const second = await check();
    expect(second.text).toBe(first.text);
    expect(second.headers['content-type']).toMatch(/^application\/json/);
    // Browser headers are left out for the webhook's client; nosniff stays, other routes keep all.
    expect(second.headers['x-content-type-options']).toBe('nosniff');
    expect(second.headers['content-security-policy']).toBeUndefined();
    const health = await request(app).get('/healthz').expect(200);
    expect(health.headers['content-security-policy']).toBeDefined();
    expect(evaluations).toBe(1);
    inventoryRevision++;
    await check();
    expect(evaluations).toBe(2);
  });

  it('does not remember an answer a clock decided in part (a deadline, a restarting isolate)', async () => {
    const cluster = indexObjects([denyAll]);
    let evaluations = 0;
    const app = fixtureControllerApp(cluster, {
      configuredDetailLevel: 'summary',
      prospectiveFindings: (): ConstraintDraft[] => {
        // The first two evaluations stop at a deadline (a busy machine, a looping template).
        if (++evaluations <= 2) noteClockBoundOutcome();
        return [];
      },
      prospectiveRevision: () => 0,
    });
    const check = () => request(app).post('/api/v1/admission-check').send({ object: deployment }).expect(200);
    for (let times = 0; times < 5; times++) await check();
    // Asked again, each stopped answer was computed again; the first decided one is remembered.
    expect(evaluations).toBe(3);
  });

  it('answers one body at each viewer level as that level renders it, from the memo the second time', () => {
    const cluster = indexObjects([denyAll]);
    const outcomes: string[] = [];
    const answer = createAdmissionCheckAnswerer({
      index: cluster.index,
      runtimeState: () => runtimeStateFor(cluster),
      observeMemo: (outcome) => outcomes.push(outcome),
    });
    const body = JSON.stringify({ object: deployment, operation: 'CREATE' });
    const first = DETAIL_LEVELS.map((level) => answer(body, level).json);
    const second = DETAIL_LEVELS.map((level) => answer(body, level).json);
    expect(second).toEqual(first);
    expect(new Set(first).size).toBe(DETAIL_LEVELS.length);
    expect(outcomes).toEqual([...DETAIL_LEVELS.map(() => 'miss'), ...DETAIL_LEVELS.map(() => 'hit')]);
  });

  it('reports each check as a hit, a miss or a bypass (the memo hit-rate metric)', async () => {
    const cluster = indexObjects([denyAll]);
    const outcomes: string[] = [];
    const app = fixtureControllerApp(cluster, { observeAdmissionMemo: (outcome) => outcomes.push(outcome) });
    const check = (object: object) =>
      request(app).post('/api/v1/admission-check').send({ object }).expect(200);
    await check(deployment);
    await check(deployment);
    // A distinct object (as every real review is: its own name and uid) is computed again.
    await check({ ...deployment, metadata: { ...deployment.metadata, name: 'web-2', uid: 'u-2' } });
    await request(app).post('/api/v1/admission-check').send({ nothing: true }).expect(400);
    expect(outcomes).toEqual(['miss', 'hit', 'miss', 'bypass']);
  });
});
