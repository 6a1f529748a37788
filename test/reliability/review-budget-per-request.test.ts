import type { IncomingMessage } from 'node:http';
import type { KubernetesObject } from '../../services/model/kubernetes';
import { KubernetesApiTestServer } from '../support/kubernetes-api-server';
import { indexObjects } from '../support/controller-fixtures';
import { kyvernoPolicy, testCallerReadAccess } from '../support/caller-rbac-fixtures';

// Issue 32, row 8: one MCP `check` of 300 Pods in 300 namespaces looked up the caller's rights once
// per object, and the 64-review cap was per lookup: 609 SubjectAccessReviews for one request. And
// every bearer token cost a TokenReview, JWT or not. Against the test API server: one request's
// lookups share its 64 reviews, and tokens no authenticator could accept are not reviewed.

const NAMESPACES = 300;

const objects: KubernetesObject[] = Array.from({ length: NAMESPACES }, (_, index) => [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns${index}`, labels: {} } } as KubernetesObject,
  kyvernoPolicy('Policy', `policy-${index}`, `ns${index}`),
]).flat();

const apiServer = new KubernetesApiTestServer();
beforeAll(() => apiServer.start());
afterAll(() => apiServer.stop());

function requestWith(token: string): IncomingMessage {
  return { headers: { authorization: `Bearer ${token}` } } as IncomingMessage;
}

const reviewsOf = (kind: string) =>
  apiServer.requests.filter((request) => request.path.includes(kind)).length;

it('300 lookups of one request, each in its own namespace: at most 64 access reviews in all', async () => {
  const { index } = indexObjects(objects);
  const access = testCallerReadAccess(apiServer, { timeoutMs: 5_000 });
  const request = requestWith(apiServer.tokens.issueUserToken({ username: 'mallory' }));
  const before = reviewsOf('/subjectaccessreviews');
  // As the MCP `check` tool asks: once per object, all for the same HTTP request.
  for (let namespace = 0; namespace < NAMESPACES; namespace++)
    await access.readableConstraints(request, index.constraintsForNamespace(`ns${namespace}`));
  expect(reviewsOf('/subjectaccessreviews') - before).toBeLessThanOrEqual(64);
  // Another request gets its own 64.
  const next = requestWith(apiServer.tokens.issueUserToken({ username: 'mallory' }));
  const beforeNext = reviewsOf('/subjectaccessreviews');
  await access.readableConstraints(next, index.constraintsForNamespace('ns299'));
  expect(reviewsOf('/subjectaccessreviews') - beforeNext).toBeGreaterThan(0);
});

it('75 bearer tokens that are not JWTs (nor bootstrap, EKS or GKE tokens) cost no TokenReview', async () => {
  const { index } = indexObjects(objects.slice(0, 2));
  const access = testCallerReadAccess(apiServer);
  const before = reviewsOf('/tokenreviews');
  for (let serial = 0; serial < 75; serial++)
    await access.readableConstraints(
      requestWith(`not-a-jwt-${serial}`),
      index.constraintsForNamespace('ns0'),
    );
  expect(reviewsOf('/tokenreviews') - before).toBe(0);
});
