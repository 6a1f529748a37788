// Workloads at risk on the real API server, one engine at a time (issue 35): Deployments run in one
// namespace per engine; then each namespace's policy is tightened after the fact — a Kyverno
// ClusterPolicy in Enforce, a Gatekeeper constraint (CEL template) in deny, a `restricted` Pod
// Security label — and exactly the workloads it would stop appear at risk in that namespace only.
// Fixed in the cluster (the label added, the pod template made restricted), they disappear. The
// ValidatingAdmissionPolicy case is test/e2e/risks.test.ts; agreement with each engine's own
// verdicts over a larger inventory is test/fidelity/risks-agreement.test.ts.
import { startCluster, waitFor, type Cluster } from './harness';
import { labelledDeployment as deployment } from '../support/required-label-policy';
import { ControllerApi, ManagedProcess, requireBuiltEntries } from './forewarn-support';
import { controllerReady, launchController, requireStarted } from './controller-process';
import { kubectlOk as kubectlOkIn, risksOf as risksIn } from './risks-support';
import { crdManifest } from './forewarn-crds';

const NAMESPACES = ['kyverno-ns', 'gatekeeper-ns', 'pod-security-ns', 'untouched'] as const;

const WORKLOADS = NAMESPACES.flatMap((namespace) => [
  deployment(namespace, 'unlabelled'),
  deployment(namespace, 'labelled', { team: 'shop' }),
]);

const CRDS = [
  crdManifest({
    group: 'kyverno.io',
    version: 'v1',
    kind: 'ClusterPolicy',
    plural: 'clusterpolicies',
    scope: 'Cluster',
  }),
  crdManifest({
    group: 'templates.gatekeeper.sh',
    version: 'v1',
    kind: 'ConstraintTemplate',
    plural: 'constrainttemplates',
    scope: 'Cluster',
  }),
  crdManifest({
    group: 'constraints.gatekeeper.sh',
    version: 'v1beta1',
    kind: 'K8sRequiredTeam',
    plural: 'k8srequiredteam',
    scope: 'Cluster',
  }),
].join('\n---\n');

const KYVERNO_POLICY = {
  apiVersion: 'kyverno.io/v1',
  kind: 'ClusterPolicy',
  metadata: { name: 'require-team-kyverno' },
  spec: {
    validationFailureAction: 'Enforce',
    background: true,
    rules: [
      {
        name: 'team-label',
        match: { any: [{ resources: { kinds: ['Deployment'], namespaces: ['kyverno-ns'] } }] },
        validate: { message: 'a team label is required', pattern: { metadata: { labels: { team: '?*' } } } },
      },
    ],
  },
};

const GATEKEEPER_TEMPLATE = {
  apiVersion: 'templates.gatekeeper.sh/v1',
  kind: 'ConstraintTemplate',
  metadata: { name: 'k8srequiredteam' },
  spec: {
    crd: { spec: { names: { kind: 'K8sRequiredTeam' } } },
    targets: [
      {
        target: 'admission.k8s.gatekeeper.sh',
        code: [
          {
            engine: 'K8sNativeValidation',
            source: {
              validations: [
                {
                  expression:
                    "has(variables.anyObject.metadata.labels) && 'team' in variables.anyObject.metadata.labels",
                  message: 'a team label is required',
                },
              ],
            },
          },
        ],
      },
    ],
  },
};

const GATEKEEPER_CONSTRAINT = {
  apiVersion: 'constraints.gatekeeper.sh/v1beta1',
  kind: 'K8sRequiredTeam',
  metadata: { name: 'require-team-gatekeeper' },
  spec: {
    enforcementAction: 'deny',
    match: { kinds: [{ apiGroups: ['apps'], kinds: ['Deployment'] }], namespaces: ['gatekeeper-ns'] },
  },
};

/** What `restricted` asks of a pod template: the fix of the Pod Security case. */
const RESTRICTED_TEMPLATE_PATCH = {
  spec: {
    template: {
      spec: {
        securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [
          {
            name: 'app',
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          },
        ],
      },
    },
  },
};

let cluster: Cluster | undefined;
let controller: ManagedProcess | undefined;
let api: ControllerApi | undefined;
const running = () => requireStarted(cluster, api);

const kubectlOk = (args: string[], stdin?: string) => kubectlOkIn(running().cluster, args, stdin);

const applyObjects = (objects: object[]) =>
  kubectlOk(['apply', '-f', '-'], objects.map((object) => JSON.stringify(object)).join('\n'));

const risksOf = (namespace: string) => risksIn(running().api.baseUrl, namespace);

/** `Kind/name:outcome` of each workload at risk, with the names of the policies it fails. */
async function atRisk(namespace: string): Promise<string[]> {
  const risks = await risksOf(namespace);
  if (!risks.evaluated || risks.pending > 0) return ['(evaluating)'];
  return risks.workloads.map(
    (workload) =>
      `${workload.kind}/${workload.name}:${workload.outcome}:${workload.findings.map((finding) => finding.name).join(',')}`,
  );
}

/** Waits until `probe` reads `done`; on timeout fails with the last reading. */
async function waitForReading(
  probe: () => Promise<string[]>,
  done: (reading: string[]) => boolean,
  description: string,
): Promise<string[]> {
  let last: string[] = [];
  try {
    await waitFor(
      async () => {
        last = await probe();
        return done(last);
      },
      60_000,
      { description },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; last seen: ${JSON.stringify(last)}`);
  }
  return last;
}

async function expectAtRisk(namespace: string, expected: string[], description: string): Promise<void> {
  const last = await waitForReading(
    () => atRisk(namespace),
    (reading) => JSON.stringify(reading) === JSON.stringify(expected),
    description,
  );
  expect(last).toEqual(expected);
}

beforeAll(async () => {
  requireBuiltEntries();
  cluster = await startCluster();
  const started = cluster;
  for (const namespace of NAMESPACES) {
    const result = await started.kubectl(['create', 'namespace', namespace]);
    if (result.code !== 0) throw new Error(result.stderr);
  }
  const crds = await started.kubectl(['apply', '-f', '-'], { stdin: CRDS });
  if (crds.code !== 0) throw new Error(crds.stderr);
  await started.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  controller = launchController(cluster, {
    kubeconfig: cluster.kubeconfigPath,
    detailLevel: 'full',
    extraArgs: ['--api-auth', 'none'],
  });
  ({ api } = await controllerReady(controller));
  await applyObjects(WORKLOADS);
});

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

test('before any policy nothing is at risk', async () => {
  for (const namespace of NAMESPACES) await expectAtRisk(namespace, [], `nothing at risk in ${namespace}`);
});

test('a Kyverno ClusterPolicy in Enforce puts the unlabelled workload at risk in its namespace only', async () => {
  await applyObjects([KYVERNO_POLICY]);
  await expectAtRisk(
    'kyverno-ns',
    ['Deployment/unlabelled:rejected:require-team-kyverno/team-label'],
    'the Kyverno policy reflected',
  );
  for (const namespace of ['gatekeeper-ns', 'pod-security-ns', 'untouched'])
    expect(await atRisk(namespace)).toEqual([]);
});

test('a Gatekeeper constraint in deny puts the unlabelled workload at risk in its namespace only', async () => {
  await applyObjects([GATEKEEPER_TEMPLATE]);
  await applyObjects([GATEKEEPER_CONSTRAINT]);
  await expectAtRisk(
    'gatekeeper-ns',
    ['Deployment/unlabelled:rejected:require-team-gatekeeper'],
    'the Gatekeeper constraint reflected',
  );
  expect(await atRisk('untouched')).toEqual([]);
});

test('a restricted Pod Security label puts every workload whose pods it would refuse at risk', async () => {
  await kubectlOk(['label', 'namespace', 'pod-security-ns', 'pod-security.kubernetes.io/enforce=restricted']);
  const last = await waitForReading(
    () => atRisk('pod-security-ns'),
    (reading) => reading.length === 2 && !reading.includes('(evaluating)'),
    'the Pod Security label reflected',
  );
  // Both Deployments' pods run as root with the default capabilities: both are stopped on rollout.
  expect(last.map((entry) => entry.split(':').slice(0, 2).join(':')).sort()).toEqual([
    'Deployment/labelled:rejected',
    'Deployment/unlabelled:rejected',
  ]);
  expect(await atRisk('untouched')).toEqual([]);
});

test('each workload fixed in the cluster leaves the risks', async () => {
  for (const namespace of ['kyverno-ns', 'gatekeeper-ns'])
    await kubectlOk(['label', 'deployment', 'unlabelled', '-n', namespace, 'team=shop']);
  for (const name of ['unlabelled', 'labelled'])
    await kubectlOk([
      'patch',
      'deployment',
      name,
      '-n',
      'pod-security-ns',
      '--type=strategic',
      '-p',
      JSON.stringify(RESTRICTED_TEMPLATE_PATCH),
    ]);
  for (const namespace of NAMESPACES)
    await expectAtRisk(namespace, [], `nothing at risk in ${namespace} once fixed`);
  const report = await fetch(`${running().api.baseUrl}/resources/reports/pod-security-ns`);
  expect(((await report.json()) as { atRiskCount: number }).atRiskCount).toBe(0);
});
