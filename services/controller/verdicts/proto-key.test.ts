import type { KubernetesObject } from '../../model/kubernetes';
import { indexObjects } from '../../../test/support/controller-fixtures';
import { buildAdmissionCheck } from './admission-check';
import { compileCel, toCelInput } from './cel/cel-program';
import { withServerDefaults } from './defaulting';
import { substituteVariables } from './kyverno/kyverno-variables';
import { matchPattern } from './kyverno/pattern';

// A JSON key `__proto__` is a field like any other to JSON.parse and to the API server's decoder.
// The copies a check makes (the defaulted object, substituted Kyverno documents, expanded patterns,
// CEL results) keep it an own field: an assignment would set the copy's prototype instead, dropping
// the field, or making the fields of its value readable as if they were the object's.

const parse = (json: string): KubernetesObject => JSON.parse(json) as KubernetesObject;

const ADMISSION = 'admissionregistration.k8s.io/v1';

const secretKeysPolicy: KubernetesObject[] = [
  {
    apiVersion: ADMISSION,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'no-hidden-secret-keys' },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['secrets'] },
        ],
      },
      validations: [
        { expression: "object.data.all(key, !key.startsWith('_'))", message: 'no key may start with _' },
      ],
    },
  },
  {
    apiVersion: ADMISSION,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: 'no-hidden-secret-keys' },
    spec: { policyName: 'no-hidden-secret-keys', validationActions: ['Deny'] },
  },
];

const teamLabelPolicy: KubernetesObject = {
  apiVersion: 'kyverno.io/v1',
  kind: 'ClusterPolicy',
  metadata: { name: 'require-team' },
  spec: {
    validationFailureAction: 'Enforce',
    rules: [
      {
        name: 'team',
        match: { any: [{ resources: { kinds: ['Pod'] } }] },
        validate: { message: 'pods need a team label', pattern: { metadata: { labels: { team: '?*' } } } },
      },
    ],
  },
};

const { index } = indexObjects([
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } },
  ...secretKeysPolicy,
  teamLabelPolicy,
]);

function verdictOf(object: KubernetesObject, name: string): string | undefined {
  return buildAdmissionCheck(index, { object, operation: 'CREATE' }).constraints.find(
    (entry) => entry.name === name,
  )?.verdict;
}

describe('a `__proto__` key in an admitted object', () => {
  test('defaulting keeps it an own field and never changes a prototype', () => {
    const pod = parse(
      '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"team",' +
        '"labels":{"__proto__":"x","app":"web"}},"spec":{"nodeSelector":{"__proto__":{"team":"a"}},' +
        '"containers":[{"name":"web","image":"web:1","resources":{"limits":{"__proto__":"1"}}}]}}',
    );
    const defaulted = withServerDefaults(pod) as unknown as {
      metadata: { labels: Record<string, unknown> };
      spec: {
        nodeSelector: Record<string, unknown>;
        containers: Array<{ resources: { requests: unknown } }>;
      };
    };
    expect(JSON.stringify(defaulted.metadata)).toBe(JSON.stringify(pod.metadata));
    expect(Object.keys(defaulted.metadata.labels)).toEqual(['__proto__', 'app']);
    expect(Object.getPrototypeOf(defaulted.metadata.labels)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(defaulted.spec.nodeSelector)).toBe(Object.prototype);
    expect(defaulted.spec.nodeSelector.team).toBeUndefined();
    expect(JSON.stringify(defaulted.spec.nodeSelector)).toBe('{"__proto__":{"team":"a"}}');
    // Requests default to the limits, the `__proto__` resource included.
    expect(JSON.stringify(defaulted.spec.containers[0].resources.requests)).toBe('{"__proto__":"1"}');
  });

  test('a Secret data key `__proto__` is judged as the API server stores it', () => {
    const secret = (key: string) =>
      parse(
        `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"team"},"data":{"${key}":"eA=="}}`,
      );
    expect(verdictOf(secret('token'), 'no-hidden-secret-keys')).toBe('passes');
    expect(verdictOf(secret('_token'), 'no-hidden-secret-keys')).toBe('violates');
    expect(verdictOf(secret('__proto__'), 'no-hidden-secret-keys')).toBe('violates');
  });

  test('fields of a `__proto__` value are not read as the object’s own', () => {
    const pod = (labels: string) =>
      parse(
        `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"team","labels":${labels}},` +
          '"spec":{"containers":[{"name":"web","image":"web:1"}]}}',
      );
    expect(verdictOf(pod('{"team":"payments"}'), 'require-team/team')).toBe('passes');
    expect(verdictOf(pod('{"__proto__":{"team":"payments"}}'), 'require-team/team')).toBe('violates');
    expect(verdictOf(pod('{"__proto__":"payments"}'), 'require-team/team')).toBe('violates');
  });
});

describe('copies made while evaluating keep a `__proto__` key', () => {
  test('Kyverno substitution', () => {
    const context = { data: { request: { object: { metadata: { name: 'web' } } } }, unbound: [] };
    const substituted = substituteVariables(
      JSON.parse('{"__proto__":"{{request.object.metadata.name}}","{{request.object.metadata.name}}":"y"}'),
      context,
      () => undefined,
    ) as Record<string, unknown>;
    expect(JSON.stringify(substituted)).toBe('{"__proto__":"web","web":"y"}');
    expect(Object.getPrototypeOf(substituted)).toBe(Object.prototype);
  });

  test('Kyverno metadata wildcards keep a pattern’s `__proto__` label', () => {
    const pattern = JSON.parse('{"metadata":{"labels":{"__proto__":"x","te*":"?*"}}}');
    const resource = (proto: string) =>
      JSON.parse(`{"metadata":{"labels":{"__proto__":"${proto}","team":"a"}}}`) as unknown;
    expect(matchPattern(pattern, resource('x')).kind).toBe('pass');
    expect(matchPattern(pattern, resource('y')).kind).toBe('fail');
  });

  test('Kyverno patterns see only own fields', () => {
    const absent = { metadata: { labels: { app: 'web' } } };
    // What every object inherits is not a field of the resource.
    expect(matchPattern({ metadata: { labels: { 'X(constructor)': 'null' } } }, absent).kind).toBe('pass');
    expect(matchPattern({ metadata: { labels: { toString: '*' } } }, absent).kind).toBe('fail');
  });

  test('CEL maps come back with the key', () => {
    const literal = compileCel("{'__proto__': 'x', 'a': 'b'}")({});
    expect(literal.ok && JSON.stringify(literal.value)).toBe('{"__proto__":"x","a":"b"}');
    const labels = JSON.parse('{"__proto__":{"team":"a"}}') as unknown;
    const echoed = compileCel('object.metadata.labels')({
      object: toCelInput({ metadata: { labels } }),
    });
    expect(echoed.ok && JSON.stringify(echoed.value)).toBe('{"__proto__":{"team":"a"}}');
    expect(echoed.ok && Object.getPrototypeOf(echoed.value)).toBe(Object.prototype);
  });
});
