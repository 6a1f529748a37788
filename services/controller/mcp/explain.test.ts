import type { DetailLevel } from '../../model/api';
import { explainMessage, type ExplainResult } from './explain';
import { readMessageFacts } from './explain-facts';
import { demoClusterObjects, indexObjects } from '../../../test/support/controller-fixtures';

// The explain rule table against the demo cluster: each kind of message picks the constraints a
// platform engineer would point at, ranked, and every returned string respects the detail level.

const demo = indexObjects(demoClusterObjects());

function explain(message: string, namespace: string, level: DetailLevel = 'full'): ExplainResult {
  return explainMessage(demo.index.constraintsForNamespace(namespace), message, { level, namespace });
}

describe('explain: message facts', () => {
  it('reads quota name, resources, address and quoted names', () => {
    const facts = readMessageFacts(
      'pods "web-1" is forbidden: exceeded quota: compute, requested: requests.memory=1Gi,limits.cpu=2, used: requests.memory=7Gi',
    );
    expect(facts.quotaName).toBe('compute');
    expect(facts.resourceNames).toEqual(['requests.memory', 'limits.cpu']);
    expect(facts.quotedNames).toEqual(['web-1']);
    expect(readMessageFacts('dial tcp 10.0.0.5:5432: i/o timeout')).toMatchObject({
      address: '10.0.0.5',
      port: '5432',
    });
  });
});

describe('explain: network and DNS', () => {
  it('ranks egress policies first for a connection timeout and names nothing foreign at summary', () => {
    const result = explain('dial tcp 10.0.0.5:5432: i/o timeout', 'shop', 'summary');
    expect(result.verdict).toBe('likely-causes');
    expect(result.candidates[0].type).toBe('NetworkEgress');
    expect(result.candidates.map((candidate) => candidate.type)).toEqual(
      expect.arrayContaining(['NetworkEgress', 'NetworkIngress']),
    );
    const text = JSON.stringify(result);
    expect(text).not.toMatch(/block-cloud-metadata|payments|5432 /);
    expect(text).not.toMatch(/mention port/);
  });

  it('uses the port of the message at detailed level', () => {
    const result = explain('dial tcp 10.0.0.5:5432: i/o timeout', 'shop', 'detailed');
    const allowList = result.candidates.find((candidate) => candidate.name === 'api-allow-frontend/egress');
    expect(allowList?.reasons).toContain(
      'its rules do not mention port 5432, so this connection is likely not allowed',
    );
  });

  it('lowers confidence and says why for "connection refused"', () => {
    const refused = explain('dial tcp 10.0.0.5:5432: connect: connection refused', 'shop');
    const timeout = explain('dial tcp 10.0.0.5:5432: i/o timeout', 'shop');
    expect(refused.explanation).toMatch(/nothing listens/);
    expect(refused.candidates.every((candidate) => candidate.confidence === 'low')).toBe(true);
    expect(timeout.candidates[0].confidence).not.toBe('low');
  });

  it('points DNS failures at egress policies only', () => {
    const result = explain('lookup ledger.payments.svc.cluster.local on 10.96.0.10:53: no such host', 'shop');
    expect(result.categories).toContain('dns');
    expect(result.candidates[0].type).toBe('NetworkEgress');
    expect(result.explanation).toMatch(/port 53/);
  });

  it('reads Istio "RBAC: access denied" as an AuthorizationPolicy, not Kubernetes RBAC', () => {
    const result = explain('RBAC: access denied', 'payments');
    expect(result.categories).toEqual(['mesh-authorization']);
    expect(result.candidates[0]).toMatchObject({ name: 'ledger-allow-shop', source: 'AuthorizationPolicy' });
  });

  it('finds nothing to blame in a namespace without network constraints', () => {
    const empty = indexObjects([]);
    const result = explainMessage(empty.index.constraintsForNamespace('quiet'), 'read tcp: i/o timeout', {
      level: 'full',
      namespace: 'quiet',
    });
    expect(result).toMatchObject({ verdict: 'no-matching-constraints', candidates: [] });
    expect(result.explanation).toMatch(/cause is likely elsewhere/);
  });
});

describe('explain: quotas and limit ranges', () => {
  it('puts the named quota first with high confidence and its usage at detailed level', () => {
    const result = explain('exceeded quota: compute, requested: requests.memory=1Gi', 'shop', 'detailed');
    expect(result.candidates[0]).toMatchObject({
      name: 'compute',
      source: 'ResourceQuota',
      confidence: 'high',
    });
    expect(result.candidates[0].reasons).toEqual(
      expect.arrayContaining(['requests.memory: 7680Mi of 8Gi used (93.8%)']),
    );
    const summary = explain('exceeded quota: compute, requested: requests.memory=1Gi', 'shop', 'summary');
    expect(JSON.stringify(summary.candidates[0].reasons)).not.toMatch(/7680Mi/);
  });

  it('"must specify limits" from a quota names the quota, then the LimitRange that could default them', () => {
    const result = explain(
      'pods "x" is forbidden: failed quota: compute: must specify limits.cpu for: app',
      'shop',
    );
    expect(result.candidates.slice(0, 2).map((candidate) => candidate.source)).toEqual([
      'ResourceQuota',
      'LimitRange',
    ]);
  });

  it('maximum per Container and OOMKilled point at the LimitRange', () => {
    for (const message of [
      'pods "x" is forbidden: maximum memory usage per Container is 2Gi, but limit is 4Gi',
      'Last State: Terminated, Reason: OOMKilled',
    ]) {
      const result = explain(message, 'shop');
      expect(result.candidates[0]).toMatchObject({ name: 'container-defaults', source: 'LimitRange' });
    }
  });
});

describe('explain: admission', () => {
  it.each([
    [
      'Gatekeeper',
      'admission webhook "validation.gatekeeper.sh" denied the request: [workloads-must-have-owner] you must provide labels: {"owner"}',
      'workloads-must-have-owner',
    ],
    [
      'Kyverno',
      'admission webhook "validate.kyverno.svc-fail" denied the request: resource Pod/shop/x was blocked due to the following policies\n\ndisallow-latest-tag:\n  validate-image-tag: validation error: Using a mutable image tag',
      'disallow-latest-tag/validate-image-tag',
    ],
    [
      'validating webhook',
      'admission webhook "images.security.example.com" denied the request: image is not signed',
      'image-signature-check/images.security.example.com',
    ],
    [
      'ValidatingAdmissionPolicy',
      "deployments.apps \"api\" is forbidden: ValidatingAdmissionPolicy 'require-resource-limits' with binding 'require-resource-limits-prod' denied request: every container must set resource limits",
      'require-resource-limits-prod',
    ],
    [
      'webhook call failure',
      'Internal error occurred: failed calling webhook "images.security.example.com": Post "https://image-checker.security.svc:443/verify": dial tcp 10.96.1.2:443: connect: connection refused',
      'image-signature-check/images.security.example.com',
    ],
  ])('names the policy behind a %s message', (_kind, message, expected) => {
    const result = explain(message, 'shop');
    expect(result.candidates[0]).toMatchObject({ name: expected, type: 'Admission', confidence: 'high' });
    expect(result.candidates[0].reasons[0]).toMatch(/^the message names /);
  });

  it('never matches a hidden name below full, so explain cannot confirm a guessed name', () => {
    const message = 'admission webhook "images.security.example.com" denied the request';
    const summary = explain(message, 'shop', 'summary');
    expect(summary.verdict).toBe('likely-causes');
    expect(summary.candidates.every((candidate) => candidate.confidence !== 'high')).toBe(true);
    expect(summary.candidates.flatMap((candidate) => candidate.reasons)).not.toContainEqual(
      expect.stringMatching(/^the message names/),
    );
    expect(JSON.stringify(summary)).not.toContain('image-signature-check');
    // Same-namespace names stay matchable at every level.
    const own = explain(
      'admission webhook "mutate.kyverno.svc" denied the request: add-cost-center-label failed',
      'shop',
      'summary',
    );
    expect(own.candidates[0].name).toBe('add-cost-center/add-cost-center-label');
  });

  it('explains PodSecurity as the namespace label Forewarn does not index', () => {
    const result = explain(
      'pods "x" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false',
      'shop',
    );
    expect(result.categories).toEqual(['pod-security']);
    expect(result.explanation).toMatch(/pod-security\.kubernetes\.io\/enforce/);
    expect(result.candidates.every((candidate) => candidate.confidence === 'low')).toBe(true);
  });
});

describe('explain: outside Forewarn and unknown', () => {
  it('says RBAC denials are outside Forewarn', () => {
    const result = explain(
      'User "dev" cannot list resource "secrets" in API group "" in the namespace "shop"',
      'shop',
    );
    expect(result).toMatchObject({ verdict: 'outside-forewarn', categories: ['rbac'], candidates: [] });
    expect(result.explanation).toMatch(/kubectl auth can-i/);
  });

  it('says clearly when it cannot tell', () => {
    const result = explain('segmentation fault (core dumped)', 'shop');
    expect(result).toMatchObject({ verdict: 'cannot-tell', categories: [], candidates: [] });
    expect(result.explanation).toMatch(/^Forewarn cannot tell which constraint caused this message/);
  });
});

describe('explain follows the one naming rule (issue 31)', () => {
  const apiServerMessage =
    "deployments.apps \"api\" is forbidden: ValidatingAdmissionPolicy 'require-resource-limits' with binding 'require-resource-limits-prod' denied request: every container must set resource limits";

  it('returns the policy the API server’s own message names, at summary too', () => {
    const result = explain(apiServerMessage, 'shop', 'summary');
    expect(result.candidates[0]).toMatchObject({
      name: 'require-resource-limits-prod',
      confidence: 'high',
      detailLevel: 'summary',
    });
    expect(result.candidates[0].ref).toBeUndefined();
    expect(result.candidates[0].reasons[0]).toMatch(/^the message names /);
  });

  it('gives every redacted candidate its reference, so the rows can be told apart and looked up', () => {
    const result = explain(
      'admission webhook "images.security.example.com" denied the request',
      'shop',
      'summary',
    );
    const redacted = result.candidates.filter((candidate) => candidate.name === 'redacted');
    expect(redacted.length).toBeGreaterThan(0);
    expect(redacted.every((candidate) => /^fw-[0-9a-f]{16}$/.test(candidate.ref ?? ''))).toBe(true);
    expect(new Set(redacted.map((candidate) => candidate.ref)).size).toBe(redacted.length);
  });
});
