// `--policy-reports` on the real API server (issue 35): Kyverno's PolicyReport CRDs installed (read
// from the Kyverno module, test/e2e/policy-report-crds.ts), the controller running as its own
// ServiceAccount with exactly the component's rules for `controller.policyReports: true`. A policy
// tightened (a ValidatingAdmissionPolicy requiring a `team` label, bound in force to one namespace)
// makes the workloads it would reject appear in `kubectl get polr` of that namespace, and in the
// ClusterPolicyReport; fixed, they disappear, reports and all. No authorization error is logged.
import { readFileSync } from 'node:fs';
import { startCluster, waitFor, type Cluster } from './harness';
import { labelledDeployment as deployment, requiredLabelPolicy } from '../support/required-label-policy';
import { ManagedProcess, requireBuiltEntries } from './forewarn-support';
import { controllerReady, launchController } from './controller-process';
import { authorizationErrors, controllerServiceAccount, identitiesManifest } from './forewarn-identities';
import { policyReportCrdsYaml } from './policy-report-crds';

const SYSTEM_NAMESPACE = 'forewarn-system';

const POLICY = requiredLabelPolicy({
  name: 'require-team',
  label: 'team',
  actions: ['Deny'],
  matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'risky' } } },
});

/** Only warned about (Warn): the workloads it reaches may still be changed, with a warning. */
const ADVICE = requiredLabelPolicy({
  name: 'advise-tier',
  label: 'tier',
  actions: ['Warn'],
  matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'advised' } } },
});

interface ReportResult {
  source: string;
  policy: string;
  result: string;
  severity: string;
  message: string;
  resources: Array<{ kind: string; name: string; namespace?: string; uid?: string }>;
}
interface Report {
  metadata: { name: string; labels?: Record<string, string> };
  results?: ReportResult[];
  summary?: Record<string, number>;
}

let cluster: Cluster | undefined;
let controller: ManagedProcess | undefined;
let baseUrl = '';

function running(): Cluster {
  if (!cluster) throw new Error('the cluster did not start (see beforeAll)');
  return cluster;
}

async function kubectlOk(args: string[], stdin?: string): Promise<string> {
  const result = await running().kubectl(args, stdin === undefined ? {} : { stdin });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

/** `kubectl get polr -n NS -o json`: the namespace's PolicyReports. */
async function policyReports(namespace: string): Promise<Report[]> {
  return (JSON.parse(await kubectlOk(['get', 'polr', '-n', namespace, '-o', 'json'])) as { items: Report[] })
    .items;
}

async function clusterReports(): Promise<Report[]> {
  return (JSON.parse(await kubectlOk(['get', 'cpolr', '-o', 'json'])) as { items: Report[] }).items;
}

const findings = (reports: Report[]) =>
  reports.flatMap((report) =>
    (report.results ?? []).map(
      (result) => `${result.resources[0]?.kind}/${result.resources[0]?.name}:${result.result}`,
    ),
  );

beforeAll(async () => {
  requireBuiltEntries();
  const crds = policyReportCrdsYaml();
  cluster = await startCluster();
  for (const namespace of ['risky', 'calm', 'advised', SYSTEM_NAMESPACE])
    await kubectlOk(['create', 'namespace', namespace]);
  await kubectlOk(['apply', '-f', '-'], crds);
  await kubectlOk([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd',
    'policyreports.wgpolicyk8s.io',
    'clusterpolicyreports.wgpolicyk8s.io',
  ]);
  await kubectlOk(
    ['apply', '-f', '-'],
    identitiesManifest({
      namespace: SYSTEM_NAMESPACE,
      tlsSecretName: 'forewarn-webhook-tls',
      webhookConfigurationName: 'forewarn',
      policyReports: true,
    }),
  );
  await kubectlOk(
    ['apply', '-f', '-'],
    [
      deployment('risky', 'unlabelled'),
      deployment('risky', 'labelled', { team: 'shop' }),
      deployment('calm', 'unlabelled'),
      deployment('advised', 'untiered', { team: 'blog' }),
    ]
      .map((object) => JSON.stringify(object))
      .join('\n'),
  );
  const kubeconfig = await cluster.serviceAccountKubeconfig(SYSTEM_NAMESPACE, controllerServiceAccount, 3600);
  controller = launchController(cluster, {
    kubeconfig,
    detailLevel: 'summary',
    extraArgs: ['--api-auth', 'none', '--policy-reports'],
  });
  const { api } = await controllerReady(controller);
  baseUrl = api.baseUrl;
  await waitFor(
    async () => {
      const response = await fetch(`${api.baseUrl}/resources/risks/risky`);
      const body = (await response.json()) as { evaluated?: boolean; pending?: number };
      return body.evaluated === true && body.pending === 0;
    },
    30_000,
    { description: 'the first evaluation of the workloads' },
  );
});

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

test('before the policy no report is written', async () => {
  // The writer has had its batch window (2 s) and more: nothing at risk, nothing written.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  expect(await policyReports('risky')).toEqual([]);
  expect(await clusterReports()).toEqual([]);
});

test('a policy in force puts the workloads it would reject into the namespace PolicyReport', async () => {
  await kubectlOk(
    ['apply', '-f', '-'],
    [...POLICY, ...ADVICE].map((object) => JSON.stringify(object)).join('\n'),
  );
  const reports = await waitFor(
    async () => {
      const found = await policyReports('risky');
      return found.length > 0 ? found : false;
    },
    60_000,
    { description: 'the PolicyReport of risky' },
  );
  expect(reports.map((report) => report.metadata.name)).toEqual(['forewarn']);
  const [report] = reports;
  expect(report?.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'forewarn' });
  expect(findings(reports)).toEqual(['Deployment/unlabelled:fail']);
  const [result] = report?.results ?? [];
  expect(result?.source).toBe('forewarn');
  expect(result?.policy).toBe('require-team');
  expect(result?.severity).toBe('critical');
  // At the controller's level (summary), as GET /resources/risks renders it: the policy names itself
  // in the API server's denial, so it is named; its own message is a detail, not shown.
  expect(result?.message).toBe(
    'will be rejected: it fails a rule of the policy (ValidatingAdmissionPolicy "require-team")',
  );
  expect(result?.resources[0]?.uid).toMatch(/^[0-9a-f-]{36}$/);
  expect(report?.summary).toMatchObject({ fail: 1, warn: 0 });
  expect(await policyReports('calm')).toEqual([]);
  // The CRD's printer columns show Forewarn's counts to `kubectl get polr`.
  const table = await kubectlOk(['get', 'polr', '-n', 'risky']);
  expect(table).toMatch(/^forewarn\s.*\b1\b/m);
  const overview = await clusterReports();
  expect(overview.map((entry) => entry.metadata.name)).toEqual(['forewarn']);
  await waitFor(async () => findings(await clusterReports()).length === 2, 60_000, {
    description: 'the ClusterPolicyReport with both namespaces',
  });
  expect(findings(await clusterReports())).toEqual(['Namespace/risky:fail', 'Namespace/advised:warn']);
  expect(findings(await policyReports('advised'))).toEqual(['Deployment/untiered:warn']);
});

/** Writes of PolicyReports so far, from the controller's metrics. */
async function reportWrites(): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return [...text.matchAll(/^forewarn_policy_report_writes_total\{[^}]*\} (\d+)$/gm)].reduce(
    (sum, match) => sum + Number(match[1]),
    0,
  );
}

test('a re-evaluation that finds the same writes nothing: what the server holds compares equal', async () => {
  const before = await reportWrites();
  expect(before).toBeGreaterThan(0);
  // A changed workload is evaluated again (the Warn policy lets the change through): the same
  // finding, the same report, nothing written.
  await kubectlOk(['annotate', 'deployment', 'untiered', '-n', 'advised', 'forewarn.test/touched=yes']);
  await new Promise((resolve) => setTimeout(resolve, 4_000));
  expect(await reportWrites()).toBe(before);
  expect(findings(await policyReports('advised'))).toEqual(['Deployment/untiered:warn']);
});

test('a workload fixed in the cluster leaves the report, and the reports disappear', async () => {
  await kubectlOk(['label', 'deployment', 'unlabelled', '-n', 'risky', 'team=shop']);
  await waitFor(async () => (await policyReports('risky')).length === 0, 60_000, {
    description: 'the PolicyReport of risky removed',
  });
  await waitFor(async () => findings(await clusterReports()).length === 1, 60_000, {
    description: 'the ClusterPolicyReport without risky',
  });
  expect(findings(await clusterReports())).toEqual(['Namespace/advised:warn']);
  await kubectlOk(['label', 'deployment', 'untiered', '-n', 'advised', 'tier=web']);
  await waitFor(async () => (await clusterReports()).length === 0, 60_000, {
    description: 'the ClusterPolicyReport removed',
  });
  expect(await policyReports('advised')).toEqual([]);
  if (!controller) throw new Error('the controller did not start');
  // The component's rules were enough for every read and write.
  expect(authorizationErrors(readFileSync(controller.logPath, 'utf8'))).toEqual([]);
});
