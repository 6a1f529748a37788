import request from 'supertest';
import type { Report } from '../../../services/model/api';
import { KubernetesApiTestServer } from '../../support/kubernetes-api-server';
import { demoClusterObjects, fixtureControllerApp, indexObjects } from '../../support/controller-fixtures';
import {
  CALLER_RBAC_OBJECTS,
  READ_CLUSTER_POLICIES,
  READ_KYVERNO_POLICIES,
  testCallerReadAccess,
} from '../../support/caller-rbac-fixtures';

// Detail levels that follow the caller's RBAC (issue 24), through the real reviewers against the
// protocol-faithful API server: a controller at `summary` shows a caller each constraint whose source
// it may `get` at `full`, and everything else exactly as before.

const cluster = indexObjects(CALLER_RBAC_OBJECTS);
const apiServer = new KubernetesApiTestServer();
let now = 1_000_000;
const TTL_MS = 5000;

beforeAll(() => apiServer.start());
afterAll(() => apiServer.stop());

function appWith(options: { timeoutMs?: number } = {}) {
  return fixtureControllerApp(cluster, {
    configuredDetailLevel: 'summary',
    callerReadAccess: testCallerReadAccess(apiServer, { ttlMs: TTL_MS, clock: () => now, ...options }),
  });
}

async function report(app: ReturnType<typeof appWith>, token?: string, query = ''): Promise<Report> {
  const call = request(app).get(`/resources/reports/shop${query}`);
  const response = await (token === undefined ? call : call.set('authorization', `Bearer ${token}`));
  expect(response.status).toBe(200);
  return response.body as Report;
}

function entryLevels(body: Report): Record<string, string> {
  return Object.fromEntries(body.constraints.map((entry) => [entry.name, entry.detailLevel]));
}

const userToken = (username: string, groups: string[] = []) =>
  apiServer.tokens.issueUserToken({ username, groups });

describe('a report at summary for a caller with its own token', () => {
  let app: ReturnType<typeof appWith>;
  beforeAll(() => {
    app = appWith();
  });

  it('shows a namespace Policy the caller may get at full, with its message, and nothing else', async () => {
    const revoke = apiServer.access.grant({
      subject: { kind: 'User', name: 'alice' },
      namespace: 'shop',
      rules: READ_KYVERNO_POLICIES,
    });
    const alice = await report(app, userToken('alice'));
    const bob = await report(app, userToken('bob'));
    const anonymous = await report(app);
    revoke();
    const shopEntry = (body: Report) => body.constraints.find((entry) => entry.name.startsWith('shop-team'));
    expect(shopEntry(alice)).toMatchObject({ detailLevel: 'full' });
    expect(shopEntry(alice)?.summary).toContain('pods need the team label (shop-team)');
    expect(shopEntry(bob)).toMatchObject({ detailLevel: 'summary' });
    expect(shopEntry(bob)?.summary).not.toContain('pods need the team label');
    expect(bob).toEqual(anonymous);
    // The ClusterPolicy stays redacted for alice: her Role does not cover it.
    expect(alice.constraints.map((entry) => entry.name)).toContain('redacted');
    expect(JSON.stringify(alice)).not.toContain('require-team');
    expect(alice.detailLevel).toBe('summary');
  });

  it('reveals a ClusterPolicy to a group bound cluster-wide, and its reference and constraint view', async () => {
    const revoke = apiServer.access.grant({
      subject: { kind: 'Group', name: 'platform' },
      rules: READ_CLUSTER_POLICIES,
    });
    const token = userToken('carol', ['platform']);
    const carol = await report(app, token);
    const cluster = carol.constraints.find((entry) => entry.name.startsWith('require-team'));
    expect(cluster).toMatchObject({ name: 'require-team/require-team-rule', detailLevel: 'full' });
    expect(cluster?.ref).toBeUndefined();
    const anonymous = await report(app);
    const ref = anonymous.constraints.find((entry) => entry.name === 'redacted')?.ref as string;
    const lookup = (bearer?: string) => {
      const call = request(app).get(`/resources/references/${ref}`);
      return bearer === undefined ? call : call.set('authorization', `Bearer ${bearer}`);
    };
    expect((await lookup(token)).status).toBe(200);
    expect((await lookup(userToken('dave'))).status).toBe(403);
    const path = '/resources/constraints/shop/require-team/require-team-rule';
    const view = await request(app).get(path).set('authorization', `Bearer ${token}`);
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({ name: 'require-team/require-team-rule', detail_level: 'full' });
    expect((await request(app).get(path)).status).toBe(404);
    revoke();
  });

  it('honours resourceNames: one review per named object when the collection is not granted', async () => {
    const revoke = apiServer.access.grant({
      subject: { kind: 'User', name: 'erin' },
      rules: [{ ...READ_CLUSTER_POLICIES[0], resourceNames: ['require-team'] }],
    });
    const erin = await report(app, userToken('erin'));
    revoke();
    expect(erin.constraints.map((entry) => entry.name)).toContain('require-team/require-team-rule');
    const asked = apiServer.access.reviews.filter((review) => review.user === 'erin');
    expect(asked.map((review) => [review.attributes.name, review.allowed])).toEqual(
      expect.arrayContaining([
        ['', false],
        ['require-team', true],
      ]),
    );
  });

  it('caches per caller and object, and forgets a revoked binding after the TTL', async () => {
    const revoke = apiServer.access.grant({
      subject: { kind: 'User', name: 'frank' },
      namespace: 'shop',
      rules: READ_KYVERNO_POLICIES,
    });
    const token = userToken('frank');
    expect(entryLevels(await report(app, token))).toMatchObject({
      'shop-team/shop-team-rule': 'full',
    });
    const reviewsAfterFirst = apiServer.access.reviews.length;
    const tokenReviewsAfterFirst = apiServer.tokens.reviews.length;
    await report(app, token);
    expect(apiServer.access.reviews.length).toBe(reviewsAfterFirst);
    expect(apiServer.tokens.reviews.length).toBe(tokenReviewsAfterFirst);
    revoke();
    // Within the TTL the cached answer stands; after it, the revocation shows.
    now += TTL_MS - 1;
    expect(entryLevels(await report(app, token))).toMatchObject({
      'shop-team/shop-team-rule': 'full',
    });
    now += 2;
    expect(entryLevels(await report(app, token))).toMatchObject({
      'shop-team/shop-team-rule': 'summary',
    });
  });

  it('asks nothing when the caller asks for summary itself, or sends no or a bogus token', async () => {
    const before = apiServer.access.reviews.length;
    const lowered = await report(app, userToken('grace'), '?detail_level=summary');
    expect(lowered.constraints.every((entry) => entry.detailLevel === 'summary')).toBe(true);
    await report(app);
    const bogus = await report(app, 'not-a-token');
    expect(bogus.constraints.every((entry) => entry.detailLevel === 'summary')).toBe(true);
    expect(apiServer.access.reviews.length).toBe(before);
  });
});

it('answers at summary within the review timeout when the API server hangs', async () => {
  const app = appWith({ timeoutMs: 300 });
  const revoke = apiServer.access.grant({
    subject: { kind: 'User', name: 'heidi' },
    rules: READ_CLUSTER_POLICIES,
  });
  apiServer.hangNext({ pathIncludes: 'subjectaccessreviews', times: 10 });
  const started = Date.now();
  const heidi = await report(app, userToken('heidi'));
  const elapsed = Date.now() - started;
  revoke();
  expect(heidi.constraints.every((entry) => entry.detailLevel === 'summary')).toBe(true);
  expect(elapsed).toBeLessThan(1500);
  expect(elapsed).toBeGreaterThanOrEqual(250);
});

it('shows a policy binding in full only to a caller who may also get the policy it binds', async () => {
  const app = fixtureControllerApp(indexObjects(demoClusterObjects()), {
    configuredDetailLevel: 'summary',
    callerReadAccess: testCallerReadAccess(apiServer, { clock: () => now }),
  });
  const admission = 'admissionregistration.k8s.io';
  const revokeBinding = apiServer.access.grant({
    subject: { kind: 'User', name: 'ivan' },
    rules: [{ apiGroups: [admission], resources: ['validatingadmissionpolicybindings'], verbs: ['get'] }],
  });
  // The binding is named at every level (the API server names it to whoever it rejects: issue 31);
  // what RBAC raises is its level, and with it the validation messages.
  const bindingFor = async (token: string) =>
    (await report(app, token)).constraints.find((entry) => entry.name === 'require-resource-limits-prod');
  const bindingOnly = await bindingFor(userToken('ivan'));
  expect(bindingOnly).toMatchObject({ detailLevel: 'summary' });
  expect(bindingOnly?.summary).toContain('validation messages hidden');
  const revokePolicy = apiServer.access.grant({
    subject: { kind: 'User', name: 'judy' },
    rules: [
      {
        apiGroups: [admission],
        resources: ['validatingadmissionpolicybindings', 'validatingadmissionpolicies'],
        verbs: ['get'],
      },
    ],
  });
  const both = await bindingFor(userToken('judy'));
  revokeBinding();
  revokePolicy();
  expect(both).toMatchObject({ detailLevel: 'full' });
  expect(both?.summary).not.toContain('validation messages hidden');
});
