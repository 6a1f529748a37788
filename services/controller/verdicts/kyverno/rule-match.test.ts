import type { KubernetesObject } from '../../../model/kubernetes';
import { indexObjects } from '../../../../test/support/controller-fixtures';
import { buildAdmissionCheck, type AdmissionCheckRequest } from '../admission-check';
import type { Requester } from '../types';

// Kyverno's match and exclude per request (rule-match.ts): who asks, which operation, the object's
// own labels, and auto-generation only where Kyverno generates.

const namespaces: KubernetesObject[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team', labels: { tier: 'apps' } } },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ops' } },
];

/** A ClusterPolicy with one rule: no `latest` image tag, under the given match and exclude. */
function policy(match: unknown, exclude?: unknown): KubernetesObject {
  return {
    apiVersion: 'kyverno.io/v1',
    kind: 'ClusterPolicy',
    metadata: { name: 'tags' },
    spec: {
      validationFailureAction: 'Enforce',
      rules: [
        {
          name: 'no-latest',
          match,
          ...(exclude === undefined ? {} : { exclude }),
          validate: { message: 'no latest tag', pattern: { spec: { containers: [{ image: '!*:latest' }] } } },
        },
      ],
    },
  };
}

function pod(labels: Record<string, string> = {}, namespace = 'team'): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace, labels },
    spec: { containers: [{ name: 'web', image: 'nginx:latest' }] },
  };
}

function deployment(
  labels: Record<string, string>,
  templateLabels: Record<string, string>,
): KubernetesObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'team', labels },
    spec: {
      template: {
        metadata: { labels: templateLabels },
        spec: { containers: [{ name: 'web', image: 'nginx:latest' }] },
      },
    },
  };
}

const alice: Requester = { username: 'alice', groups: ['devs', 'system:authenticated'] };
const deployer: Requester = {
  username: 'system:serviceaccount:ci:deployer',
  groups: ['system:serviceaccounts'],
};

function verdictOf(
  source: KubernetesObject,
  object: KubernetesObject,
  request: Partial<AdmissionCheckRequest> = {},
): { verdict: string; reason?: string } | undefined {
  const { index } = indexObjects([...namespaces, source]);
  const [entry] = buildAdmissionCheck(index, { object, operation: 'CREATE', ...request }).constraints.filter(
    (candidate) => candidate.sourceKind === 'ClusterPolicy',
  );
  return entry && { verdict: entry.verdict, ...(entry.reason ? { reason: entry.reason } : {}) };
}

const pods = { resources: { kinds: ['Pod'] } };

describe('Kyverno match and exclude, per request', () => {
  it('decides a rule matched by subjects only once it knows who asks', () => {
    const bySubject = policy({ any: [{ ...pods, subjects: [{ kind: 'Group', name: 'devs' }] }] });
    expect(verdictOf(bySubject, pod())).toEqual({
      verdict: 'unknown',
      reason: expect.stringMatching(/depends on who makes the request/) as string,
    });
    expect(verdictOf(bySubject, pod(), { requester: alice })).toEqual({ verdict: 'violates' });
    // A requester the subjects do not name: Kyverno never applies the rule.
    expect(verdictOf(bySubject, pod(), { requester: deployer })).toBeUndefined();
  });

  it('matches service account subjects by their user name, with wildcards', () => {
    const byAccount = policy({
      any: [{ ...pods, subjects: [{ kind: 'ServiceAccount', namespace: 'ci', name: 'deploy*' }] }],
    });
    expect(verdictOf(byAccount, pod(), { requester: deployer })).toEqual({ verdict: 'violates' });
    expect(verdictOf(byAccount, pod(), { requester: alice })).toBeUndefined();
  });

  it('takes a rule off the requests its exclude.subjects names', () => {
    const excluded = policy({ any: [pods] }, { any: [{ subjects: [{ kind: 'User', name: 'alice' }] }] });
    expect(verdictOf(excluded, pod(), { requester: alice })).toBeUndefined();
    expect(verdictOf(excluded, pod(), { requester: deployer })).toEqual({ verdict: 'violates' });
    expect(verdictOf(excluded, pod())?.verdict).toBe('unknown');
  });

  it('cannot say whether exclude.clusterRoles holds without the requester bindings, unless the rest of the filter fails', () => {
    const exclude = { any: [{ resources: { namespaces: ['team'] }, clusterRoles: ['cluster-admin'] }] };
    const excluded = policy({ any: [pods] }, exclude);
    expect(verdictOf(excluded, pod(), { requester: alice })).toEqual({
      verdict: 'unknown',
      reason: expect.stringMatching(/ClusterRoles \(from its role bindings/) as string,
    });
    // In `ops` the exclude's namespaces already fail: the rule applies whoever asks.
    expect(verdictOf(excluded, pod({}, 'ops'))).toEqual({ verdict: 'violates' });
    // With the requester's cluster roles known, it is decided.
    const admin = { ...alice, clusterRoles: ['cluster-admin'] };
    expect(verdictOf(excluded, pod(), { requester: admin })).toBeUndefined();
    expect(verdictOf(excluded, pod(), { requester: { ...alice, clusterRoles: ['view'] } })).toEqual({
      verdict: 'violates',
    });
  });

  it('applies a rule only to the operations it lists', () => {
    const onUpdate = policy({ any: [{ resources: { kinds: ['Pod'], operations: ['UPDATE'] } }] });
    expect(verdictOf(onUpdate, pod())).toBeUndefined();
    expect(verdictOf(onUpdate, pod(), { operation: 'UPDATE', oldObject: pod() })).toEqual({
      verdict: 'violates',
    });
    const onCreate = policy({ any: [{ resources: { kinds: ['Pod'], operations: ['CREATE'] } }] });
    expect(verdictOf(onCreate, pod(), { operation: 'UPDATE', oldObject: pod() })).toBeUndefined();
  });

  it('honours exclude.resources.selector on the object own labels', () => {
    const excluded = policy(
      { any: [pods] },
      { any: [{ resources: { selector: { matchLabels: { legacy: 'true' } } } }] },
    );
    expect(verdictOf(excluded, pod({ legacy: 'true' }))).toBeUndefined();
    expect(verdictOf(excluded, pod({ legacy: 'false' }))).toEqual({ verdict: 'violates' });
  });

  it('honours wildcard keys and values in match.resources.selector', () => {
    const selected = policy({
      any: [{ resources: { kinds: ['Pod'], selector: { matchLabels: { 'app.*/tier': 'back*' } } } }],
    });
    expect(verdictOf(selected, pod({ 'app.example.com/tier': 'backend' }))).toEqual({ verdict: 'violates' });
    expect(verdictOf(selected, pod({ 'app.example.com/tier': 'frontend' }))).toBeUndefined();
  });

  it('selects a Deployment by its own labels, not its pod template labels', () => {
    const selected = policy({
      any: [{ resources: { kinds: ['Deployment'], selector: { matchLabels: { team: 'web' } } } }],
    });
    const rule = {
      ...selected,
      spec: {
        validationFailureAction: 'Enforce',
        rules: [
          {
            name: 'no-latest',
            match: {
              any: [{ resources: { kinds: ['Deployment'], selector: { matchLabels: { team: 'web' } } } }],
            },
            validate: { message: 'two replicas', pattern: { spec: { replicas: '>1' } } },
          },
        ],
      },
    };
    expect(verdictOf(rule, deployment({ team: 'web' }, {}))).toEqual({ verdict: 'violates' });
    expect(verdictOf(rule, deployment({}, { team: 'web' }))).toBeUndefined();
  });

  it('auto-generates for pod controllers only when the kind is written `Pod`, not `v1/Pod`', () => {
    const literal = policy({ any: [pods] });
    const versioned = policy({ any: [{ resources: { kinds: ['v1/Pod'] } }] });
    expect(verdictOf(literal, deployment({}, {}))).toEqual({ verdict: 'violates' });
    expect(verdictOf(versioned, deployment({}, {}))).toBeUndefined();
    expect(verdictOf(versioned, pod())).toEqual({ verdict: 'violates' });
  });

  it('carries subjects and operations through auto-generation to the controller', () => {
    const generated = policy({
      any: [
        {
          resources: { kinds: ['Pod'], operations: ['CREATE'] },
          subjects: [{ kind: 'Group', name: 'devs' }],
        },
      ],
    });
    expect(verdictOf(generated, deployment({}, {}), { requester: alice })).toEqual({ verdict: 'violates' });
    expect(verdictOf(generated, deployment({}, {}), { requester: deployer })).toBeUndefined();
    expect(
      verdictOf(generated, deployment({}, {}), {
        requester: alice,
        operation: 'UPDATE',
        oldObject: deployment({}, {}),
      }),
    ).toBeUndefined();
  });

  it("binds request.userInfo and the service account's name when the review says who asks", () => {
    const byRequester: KubernetesObject = {
      ...policy({ any: [pods] }),
      spec: {
        validationFailureAction: 'Enforce',
        rules: [
          {
            name: 'no-latest',
            match: { any: [pods] },
            preconditions: {
              all: [{ key: '{{ serviceAccountName }}', operator: 'NotEquals', value: 'release-bot' }],
            },
            validate: {
              message: 'no latest tag for {{ request.userInfo.username }}',
              deny: {
                conditions: {
                  all: [{ key: 'developers', operator: 'AnyIn', value: '{{ request.userInfo.groups }}' }],
                },
              },
            },
          },
        ],
      },
    };
    expect(verdictOf(byRequester, pod())).toEqual({
      verdict: 'unknown',
      reason: expect.stringMatching(/depends on who makes the request/) as string,
    });
    const developer = { username: 'dana', groups: ['developers'] };
    expect(verdictOf(byRequester, pod(), { requester: developer })).toEqual({ verdict: 'violates' });
    expect(verdictOf(byRequester, pod(), { requester: alice })).toEqual({ verdict: 'passes' });
    const bot = { username: 'system:serviceaccount:ci:release-bot', groups: ['developers'] };
    expect(verdictOf(byRequester, pod(), { requester: bot })).toBeUndefined();
  });
});
