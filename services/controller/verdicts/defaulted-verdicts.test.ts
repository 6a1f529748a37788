import type { KubernetesObject } from '../../model/kubernetes';
import { indexObjects } from '../../../test/support/controller-fixtures';
import { buildAdmissionCheck } from './admission-check';

// Verdicts on the object as the API server validates it: defaulted (issue 21). Before defaulting,
// `c.imagePullPolicy` on a container whose manifest names no pull policy was "no such key", and a
// policy failing closed gave `violates` to pods the server admits.

const ADMISSION = 'admissionregistration.k8s.io/v1';

function policy(name: string, resources: string[], expression: string, message: string): KubernetesObject[] {
  return [
    {
      apiVersion: ADMISSION,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: ['', 'apps'],
              apiVersions: ['v1'],
              operations: ['CREATE', 'UPDATE'],
              resources,
            },
          ],
        },
        validations: [{ expression, message }],
      },
    },
    {
      apiVersion: ADMISSION,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name },
      spec: { policyName: name, validationActions: ['Deny'] },
    },
  ];
}

const POLICIES = [
  ...policy(
    'no-always-pull',
    ['pods'],
    "object.spec.containers.all(c, c.imagePullPolicy != 'Always')",
    'images must not be pulled on every start',
  ),
  ...policy(
    'bounded-history',
    ['deployments'],
    'object.spec.revisionHistoryLimit <= 10 && object.spec.strategy.rollingUpdate.maxSurge == "25%"',
    'keep at most 10 revisions',
  ),
  ...policy(
    'probes-tolerate-slow-starts',
    ['pods'],
    'object.spec.containers.all(c, !has(c.livenessProbe) || c.livenessProbe.failureThreshold >= 3)',
    'liveness probes must tolerate 3 failures',
  ),
];

const { index } = indexObjects([
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } },
  ...POLICIES,
]);

function verdicts(object: KubernetesObject): Record<string, { verdict: string; paths: string[] }> {
  const entries = buildAdmissionCheck(index, { object, operation: 'CREATE' }).constraints.filter(
    (entry) => entry.sourceKind === 'ValidatingAdmissionPolicyBinding',
  );
  return Object.fromEntries(
    entries.map((entry) => [
      entry.name,
      { verdict: entry.verdict, paths: entry.evidence.map((item) => item.path) },
    ]),
  );
}

const pod = (containers: Array<Record<string, unknown>>): KubernetesObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'team' },
  spec: { containers },
});

test('a pinned image gets IfNotPresent and passes; :latest or no tag gets Always and violates, naming the container', () => {
  expect(verdicts(pod([{ name: 'web', image: 'registry.example.com/web:1.4' }]))['no-always-pull']).toEqual({
    verdict: 'passes',
    paths: [],
  });
  const mixed = pod([
    { name: 'pinned', image: 'registry.example.com/web:1.4' },
    { name: 'floating', image: 'registry.example.com/web' },
    { name: 'latest', image: 'registry.example.com/web:latest', imagePullPolicy: 'IfNotPresent' },
  ]);
  expect(verdicts(mixed)['no-always-pull']).toEqual({ verdict: 'violates', paths: ['spec.containers[1]'] });
});

test('a probe without failureThreshold is judged with the default of 3', () => {
  const probed = pod([{ name: 'web', image: 'web:1', livenessProbe: { httpGet: { port: 80 } } }]);
  expect(verdicts(probed)['probes-tolerate-slow-starts']?.verdict).toBe('passes');
  const strict = pod([
    { name: 'web', image: 'web:1', livenessProbe: { httpGet: { port: 80 }, failureThreshold: 1 } },
  ]);
  expect(verdicts(strict)['probes-tolerate-slow-starts']).toEqual({
    verdict: 'violates',
    paths: ['spec.containers[0]'],
  });
});

test("a Deployment is judged with the controller's defaults (revisionHistoryLimit, strategy)", () => {
  const deployment: KubernetesObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'team' },
    spec: { template: { spec: { containers: [{ name: 'web', image: 'web:1' }] } } },
  };
  expect(verdicts(deployment)['bounded-history']?.verdict).toBe('passes');
  const before = JSON.stringify(deployment);
  const kept = { ...deployment, spec: { ...(deployment.spec as object), revisionHistoryLimit: 20 } };
  expect(verdicts(kept)['bounded-history']?.verdict).toBe('violates');
  // The caller's object is not changed by the check.
  expect(JSON.stringify(deployment)).toBe(before);
});
