// Workloads at risk on the real API server (issue 35): Deployments run in two namespaces; a
// ValidatingAdmissionPolicy requiring a `team` label is bound (Deny) to one of them. The workloads
// it would reject appear at risk in that namespace (and `kubectl apply --dry-run=server` of each
// agrees: rejected exactly when at risk), then disappear once fixed in the cluster. The other
// namespace stays clear. Nothing is asked of the controller but its resources.
import { startCluster, waitFor, type Cluster } from './harness';
import { labelledDeployment as deployment, requiredLabelPolicy } from '../support/required-label-policy';
import { ControllerApi, ManagedProcess, requireBuiltEntries } from './forewarn-support';
import { controllerReady, launchController, requireStarted } from './controller-process';
import { kubectlOk as kubectlOkIn, risksOf as risksIn } from './risks-support';

const WORKLOADS = [
  deployment('risky', 'unlabelled'),
  deployment('risky', 'labelled', { team: 'shop' }),
  deployment('calm', 'unlabelled'),
];

const POLICY = requiredLabelPolicy({
  name: 'require-team',
  label: 'team',
  actions: ['Deny'],
  matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'risky' } } },
});

let cluster: Cluster | undefined;
let controller: ManagedProcess | undefined;
let api: ControllerApi | undefined;
const running = () => requireStarted(cluster, api);

const kubectlOk = (args: string[], stdin?: string) => kubectlOkIn(running().cluster, args, stdin);

const risksOf = (namespace: string) => risksIn(running().api.baseUrl, namespace);

const atRisk = async (namespace: string) =>
  (await risksOf(namespace)).workloads.map(
    (workload) => `${workload.kind}/${workload.name}:${workload.outcome}`,
  );

beforeAll(async () => {
  requireBuiltEntries();
  cluster = await startCluster();
  const started = cluster;
  for (const namespace of ['risky', 'calm']) {
    const result = await started.kubectl(['create', 'namespace', namespace]);
    if (result.code !== 0) throw new Error(result.stderr);
  }
  controller = launchController(cluster, {
    kubeconfig: cluster.kubeconfigPath,
    detailLevel: 'full',
    extraArgs: ['--api-auth', 'none'],
  });
  ({ api } = await controllerReady(controller));
  await kubectlOk(['apply', '-f', '-'], WORKLOADS.map((object) => JSON.stringify(object)).join('\n'));
});

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

test('before the policy nothing is at risk', async () => {
  await waitFor(
    async () => {
      const risks = await risksOf('risky');
      return risks.evaluated && risks.pending === 0;
    },
    30_000,
    { description: 'the first evaluation of the workloads' },
  );
  expect(await atRisk('risky')).toEqual([]);
  expect(await atRisk('calm')).toEqual([]);
});

test('a policy bound in force puts exactly the workloads the API server would reject at risk', async () => {
  await kubectlOk(['apply', '-f', '-'], POLICY.map((object) => JSON.stringify(object)).join('\n'));
  await waitFor(async () => (await atRisk('risky')).length > 0, 30_000, {
    description: 'the workloads at risk after the policy',
  });
  expect(await atRisk('risky')).toEqual(['Deployment/unlabelled:rejected']);
  expect(await atRisk('calm')).toEqual([]);
  const [entry] = (await risksOf('risky')).workloads;
  // Compared field by field: fetch's JSON arrays come from another realm than `expect.any(Array)`'s.
  expect(entry?.findings.map((finding) => [finding.name, finding.verdict])).toEqual([
    ['require-team', 'violates'],
  ]);
  expect(entry?.findings[0]?.evidence.length).toBeGreaterThan(0);
  // The server agrees on each workload, re-applied as it runs (once the policy is in force there).
  const dryRun = async (namespace: string, name: string) => {
    const current = await kubectlOk(['get', 'deployment', name, '-n', namespace, '-o', 'json']);
    return (await running().cluster.kubectl(['apply', '--dry-run=server', '-f', '-'], { stdin: current }))
      .code;
  };
  await waitFor(async () => (await dryRun('risky', 'unlabelled')) !== 0, 30_000, {
    description: 'the API server enforcing the policy',
  });
  expect(await dryRun('risky', 'labelled')).toBe(0);
  expect(await dryRun('calm', 'unlabelled')).toBe(0);
});

test('a workload fixed in the cluster is no longer at risk', async () => {
  await kubectlOk(['label', 'deployment', 'unlabelled', '-n', 'risky', 'team=shop']);
  await waitFor(async () => (await atRisk('risky')).length === 0, 30_000, {
    description: 'the fixed workload leaving the risks',
  });
  const report = await fetch(`${running().api.baseUrl}/resources/reports/risky`);
  expect(((await report.json()) as { atRiskCount: number }).atRiskCount).toBe(0);
});
