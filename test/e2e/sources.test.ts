// More policy sources end to end (issue 17): the minimal CRDs of test/e2e/crds installed on a real
// kube-apiserver, the demo cluster's Calico, AdminNetworkPolicy, Kyverno CEL/cleanup, Linkerd and
// Pod Security Admission objects created there, and the controller (watching the cluster) reporting
// them with the severities DESIGN.md section 3 gives. The API server enforces Pod Security Admission
// itself (1.25+): a Pod that breaks `restricted` is rejected where Forewarn reports the enforce level.
// One cluster for the file; the tests run in order and build on each other.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { startCluster, waitFor, type Cluster } from './harness';
import { podSecurityDenial, rejectedWith, waitUntilEnforced } from './enforcement';
import {
  ControllerApi,
  ManagedProcess,
  repositoryRoot,
  requireBuiltEntries,
  type ReportEntry,
} from './forewarn-support';
import { controllerReady, launchController, requireStarted } from './controller-process';

const crdDirectory = path.join(__dirname, 'crds');
const demoDirectory = path.join(repositoryRoot, 'examples/manifests');
/** Demo files with the namespaces and the new sources' objects, in the order they are applied. */
const DEMO_FILES = [
  'namespaces.yaml',
  'pod-security.yaml',
  'calico.yaml',
  'admin-network-policies.yaml',
  'kyverno-cel.yaml',
  'linkerd.yaml',
];

let cluster: Cluster | undefined;
let controller: ManagedProcess | undefined;
let api: ControllerApi | undefined;

const running = (): { cluster: Cluster; api: ControllerApi } => requireStarted(cluster, api);

async function kubectl(args: readonly string[]): Promise<string> {
  if (!cluster) throw new Error('the cluster did not start (see beforeAll)');
  const result = await cluster.kubectl(args);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

/** Waits until the namespace's report holds every expected `name → severity effect`. */
async function reportHolds(namespace: string, expected: Record<string, string>): Promise<ReportEntry[]> {
  return waitFor(
    async () => {
      const report = await running().api.report(namespace);
      const seen = new Map(report.map((entry) => [entry.name, `${entry.severity} ${entry.effect}`]));
      return Object.entries(expected).every(([name, outcome]) => seen.get(name) === outcome) ? report : false;
    },
    30_000,
    { description: `report of ${namespace} holding ${JSON.stringify(expected)}` },
  );
}

beforeAll(async () => {
  requireBuiltEntries();
  cluster = await startCluster();
  for (const file of (await readdir(crdDirectory)).filter((name) => name.endsWith('.yaml')).sort())
    await kubectl(['apply', '-f', path.join(crdDirectory, file)]);
  await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  controller = launchController(cluster, { kubeconfig: cluster.kubeconfigPath, detailLevel: 'full' });
  ({ api } = await controllerReady(controller));
});

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

test('every new adapter is enabled once its CRDs are served, and the controller settles healthy', async () => {
  // A watch started in the instant a CRD becomes Established can fail once before the API
  // server serves the new resource; the controller retries it, so health may pass through
  // "degraded" before it settles. The wait names the last health seen if it never does.
  const health = await waitFor(
    async () => {
      const current = await running().api.health();
      const allEnabled = ['cni', 'adminnetworkpolicy', 'policyengine', 'mesh', 'podsecurity'].every(
        (name) => current.adapters[name]?.enabled,
      );
      if (!allEnabled || current.status !== 'healthy') throw new Error(JSON.stringify(current));
      return current;
    },
    30_000,
    { description: 'new adapters enabled and healthy' },
  );
  expect(health.status).toBe('healthy');
});

test('the demo objects of each source are reported with their severities and effects', async () => {
  for (const file of DEMO_FILES) await kubectl(['apply', '-f', path.join(demoDirectory, file)]);
  await reportHolds('checkout', {
    'pod-security/enforce': 'Critical deny',
    'pod-security/warn': 'Warning warn',
    'pod-security/audit': 'Info audit',
    'linkerd/default-inbound-policy': 'Warning require',
    'prod-egress-guardrails': 'Critical deny',
  });
  await reportHolds('payments', {
    'ledger-from-api': 'Warning restrict',
    'ledger-admin': 'Critical deny',
    'ledger-api': 'Warning require',
    'disallow-host-path': 'Critical deny',
  });
  await reportHolds('sandbox', {
    'dev-egress-guard': 'Critical deny',
    default: 'Warning deny',
    'clean-bare-pods': 'Warning delete',
  });
});

test('an AuthorizationPolicy created in the cluster turns a deny-all Server into an allow-list', async () => {
  const policy = [
    'apiVersion: policy.linkerd.io/v1alpha1',
    'kind: AuthorizationPolicy',
    'metadata: { name: ledger-admin-from-ops, namespace: payments }',
    'spec:',
    '  targetRef: { group: policy.linkerd.io, kind: Server, name: ledger-admin }',
    '  requiredAuthenticationRefs:',
    '    - { group: policy.linkerd.io, kind: MeshTLSAuthentication, name: shop-api }',
  ].join('\n');
  const applied = await running().cluster.kubectl(['apply', '-f', '-'], { stdin: policy });
  expect(applied.code).toBe(0);
  await reportHolds('payments', { 'ledger-admin': 'Warning require' });
});

test('the API server rejects a Pod that breaks restricted where Forewarn reports enforce, and admits its Deployment', async () => {
  // Pods need the namespace's default ServiceAccount, which only a controller-manager would create.
  await running().cluster.kubectl(['create', 'serviceaccount', 'default', '-n', 'checkout']);
  // The server reads the namespace's labels from its informer (issue 36).
  await waitUntilEnforced(running().cluster, [
    {
      description: 'Pod Security "restricted" enforced in checkout',
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'probe', namespace: 'checkout' },
        spec: { containers: [{ name: 'probe', image: 'registry.example.com/shell:1' }] },
      },
      inForce: rejectedWith(podSecurityDenial('restricted')),
    },
  ]);
  const rejected = await running().cluster.kubectl([
    'run',
    'root-shell',
    '--image=registry.example.com/shell:1',
    '-n',
    'checkout',
  ]);
  expect(rejected.code).not.toBe(0);
  expect(rejected.stderr).toContain('violates PodSecurity "restricted:latest"');
  const deployment = await running().cluster.kubectl([
    'create',
    'deployment',
    'root-shell',
    '--image=registry.example.com/shell:1',
    '-n',
    'checkout',
  ]);
  expect(deployment.code).toBe(0);
  // warn mode: the API server warns about the Deployment's pod template, as Forewarn's warn says.
  expect(deployment.stderr).toContain('would violate PodSecurity "restricted:latest"');
  const report = await reportHolds('checkout', { 'pod-security/enforce': 'Critical deny' });
  expect(report.find((entry) => entry.name === 'pod-security/enforce')?.source).toBe('Namespace');
});
