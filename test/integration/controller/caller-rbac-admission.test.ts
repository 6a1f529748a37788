import request from 'supertest';
import type { AdmissionCheck, ConstraintList } from '../../../services/model/api';
import { createApiAccess } from '../../../services/controller/http/api-auth';
import { kubernetesTokenReviewer } from '../../../services/controller/http/token-review';
import type { AdmissionMemoOutcome } from '../../../services/controller/http/admission-check-route';
import { silentLogger } from '../../../services/logging/logger';
import { KubernetesApiTestServer } from '../../support/kubernetes-api-server';
import { fixtureControllerApp, indexObjects } from '../../support/controller-fixtures';
import {
  CALLER_RBAC_OBJECTS,
  READ_KYVERNO_POLICIES,
  testCallerReadAccess,
} from '../../support/caller-rbac-fixtures';

// Issue 24 on the webhook's routes: `POST /api/v1/admission-check` and `GET /api/v1/constraints`
// answer a caller who sends its own bearer token with each constraint whose source it may `get` at
// `full`, like the reports; the webhook keeps `full` without any SubjectAccessReview, and the
// admission memo never hands one caller's answer to another.

const SHOP_MESSAGE = 'pods need the team label (shop-team)';
const WEBHOOK = 'forewarn-system/forewarn-webhook';
const cluster = indexObjects(CALLER_RBAC_OBJECTS);
const apiServer = new KubernetesApiTestServer();
const tokens: Record<string, string> = {};
const memoOutcomes: AdmissionMemoOutcome[] = [];
let callerReadAccess: ReturnType<typeof testCallerReadAccess>;
let app: ReturnType<typeof fixtureControllerApp>;

beforeAll(async () => {
  await apiServer.start();
  apiServer.access.grant({
    subject: { kind: 'User', name: 'alice' },
    namespace: 'shop',
    rules: READ_KYVERNO_POLICIES,
  });
  tokens.alice = apiServer.tokens.issueUserToken({ username: 'alice' });
  tokens.bob = apiServer.tokens.issueUserToken({ username: 'bob' });
  tokens.webhook = apiServer.tokens.issue({
    namespace: 'forewarn-system',
    serviceAccount: 'forewarn-webhook',
    audiences: ['forewarn-controller'],
  });
  callerReadAccess = testCallerReadAccess(apiServer);
  app = fixtureControllerApp(cluster, {
    configuredDetailLevel: 'summary',
    apiAccess: createApiAccess({
      mode: 'tokenreview',
      configuredDetailLevel: 'summary',
      webhookServiceAccount: WEBHOOK,
      reviewToken: kubernetesTokenReviewer(apiServer.kubeConfig()),
      logger: silentLogger(),
    }),
    callerReadAccess,
    observeAdmissionMemo: (outcome) => memoOutcomes.push(outcome),
  });
});
afterAll(() => apiServer.stop());

const POD = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'shop' },
  spec: { containers: [{ name: 'web', image: 'nginx' }] },
};

/** The body as the webhook sends it (declared length, plain JSON): the fast path answers it. */
async function check(who: string | undefined, body: object = { object: POD }): Promise<AdmissionCheck> {
  const call = request(app).post('/api/v1/admission-check').set('content-type', 'application/json');
  const response = await (who === undefined ? call : call.set('authorization', `Bearer ${tokens[who]}`)).send(
    JSON.stringify(body),
  );
  expect(response.status).toBe(200);
  return response.body as AdmissionCheck;
}

const shopEntry = <T extends { name: string }>(answer: { constraints: T[] }) =>
  answer.constraints.find((entry) => entry.name.startsWith('shop-team'));

it('shows alice the namespace Policy she may get at full in the admission check, and bob nothing more', async () => {
  const alice = await check('alice');
  expect(shopEntry(alice)).toMatchObject({
    detailLevel: 'full',
    verdict: 'violates',
    sourceName: 'shop-team',
  });
  expect(shopEntry(alice)?.summary).toContain(SHOP_MESSAGE);
  // The ClusterPolicy is not hers to read: redacted, at summary.
  expect(JSON.stringify(alice)).not.toContain('require-team');
  expect(alice.constraints.find((entry) => entry.name === 'redacted')).toMatchObject({
    detailLevel: 'summary',
  });
  const bob = await check('bob');
  // At summary a policy of the namespace itself is named; its message is not.
  expect(shopEntry(bob)).toMatchObject({ detailLevel: 'summary', verdict: 'violates' });
  expect(JSON.stringify(bob)).not.toContain(SHOP_MESSAGE);
  expect(bob.constraints.every((entry) => entry.detailLevel === 'summary')).toBe(true);
  expect(bob).toEqual(await check(undefined));
});

it('never serves one caller the answer the memo kept for another, in any order', async () => {
  memoOutcomes.length = 0;
  const seen = [];
  for (const who of ['bob', 'alice', 'bob', 'alice', undefined, 'alice', 'webhook', 'bob'])
    seen.push({ who, text: JSON.stringify(await check(who)) });
  for (const { who, text } of seen) {
    expect(text.includes(SHOP_MESSAGE)).toBe(who === 'alice' || who === 'webhook');
    expect(text.includes('require-team')).toBe(who === 'webhook');
  }
  // Alice's answers are never remembered nor read from the memo; bob's and the anonymous one are.
  expect(memoOutcomes.filter((outcome) => outcome === 'bypass')).toHaveLength(3);
  expect(memoOutcomes.filter((outcome) => outcome === 'hit').length).toBeGreaterThanOrEqual(2);
});

it('keeps the webhook at full from the memo without a single SubjectAccessReview', async () => {
  await check('webhook');
  const before = callerReadAccess.reviewCounts();
  const webhook = await check('webhook', { object: POD, view: 'warnings' });
  expect(callerReadAccess.reviewCounts()).toEqual(before);
  expect(shopEntry(webhook)).not.toHaveProperty('detailLevel');
  expect(JSON.stringify(webhook)).toContain('require-team');
  // A caller asking for the webhook's view is told the level of each entry.
  const alice = await check('alice', { object: POD, view: 'warnings' });
  expect(shopEntry(alice)).toMatchObject({ detailLevel: 'full', verdict: 'violates' });
  expect(alice.constraints.find((entry) => entry.name === 'redacted')).toMatchObject({
    detailLevel: 'summary',
  });
});

it("answers the list query with what each caller's RBAC lets it get", async () => {
  const list = async (who: string) =>
    (
      await request(app)
        .get('/api/v1/constraints?namespace=shop&resource=pods')
        .set('authorization', `Bearer ${tokens[who]}`)
        .expect(200)
    ).body as ConstraintList;
  const alice = await list('alice');
  expect(shopEntry(alice)).toMatchObject({ detailLevel: 'full', sourceNamespace: 'shop' });
  expect(shopEntry(alice)?.summary).toContain(SHOP_MESSAGE);
  const bob = await list('bob');
  expect(JSON.stringify(bob)).not.toContain(SHOP_MESSAGE);
  expect(bob.constraints.every((entry) => entry.detailLevel === 'summary')).toBe(true);
  expect(shopEntry(await list('webhook'))).toMatchObject({ detailLevel: 'full' });
});
