// Detail levels that follow the caller's RBAC (issue 24), against the real API server: the controller
// runs as its own ServiceAccount with the component's ClusterRole (infra/rbac.ts: `create` on
// tokenreviews and subjectaccessreviews), `--api-auth=tokenreview`, `--detail-level summary` and a
// short `--caller-rbac-ttl`. Callers are ServiceAccounts of namespace `people` presenting their own
// API-audience tokens (what `kubectl create token` gives, and what a kubeconfig holds): one bound by a
// RoleBinding to a Role that reads the Kyverno Policies of `shop` sees that Policy's rule message;
// another sees what everyone sees; a ClusterRole granting `get` on ClusterPolicies reveals the
// ClusterPolicy's name; deleting that binding hides it again within the TTL.
import { startCluster, waitFor, type Cluster } from './harness';
import { asJsonObject, ManagedProcess, requireBuiltEntries } from './forewarn-support';
import { controllerReady, launchController } from './controller-process';
import { authorizationErrors, controllerServiceAccount, identitiesManifest } from './forewarn-identities';
import { crdManifest, initialCrds } from './forewarn-crds';
import { kyvernoPolicy } from '../support/caller-rbac-fixtures';

const SYSTEM_NAMESPACE = 'forewarn-system';
const PEOPLE = 'people';
const TTL_SECONDS = 3;
const SHOP_MESSAGE = 'pods need the team label (shop-team)';
const CLUSTER_POLICY = 'require-team';

let cluster: Cluster | undefined;
let controller: ManagedProcess | undefined;
let baseUrl: string | undefined;
const tokens: Record<string, string> = {};

async function kubectlOk(args: string[], stdin?: string): Promise<string> {
  if (!cluster) throw new Error('the cluster did not start (see beforeAll)');
  const result = await cluster.kubectl(args, stdin === undefined ? {} : { stdin });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

const rbacObjects = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: PEOPLE } },
  ...['alice', 'bob', 'carol'].map((name) => ({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name, namespace: PEOPLE },
  })),
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'read-kyverno-policies', namespace: 'shop' },
    rules: [{ apiGroups: ['kyverno.io'], resources: ['policies'], verbs: ['get', 'list'] }],
  },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'alice-reads-policies', namespace: 'shop' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-kyverno-policies' },
    subjects: [{ kind: 'ServiceAccount', name: 'alice', namespace: PEOPLE }],
  },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'read-cluster-policies' },
    rules: [{ apiGroups: ['kyverno.io'], resources: ['clusterpolicies'], verbs: ['get'] }],
  },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'carol-reads-cluster-policies' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'read-cluster-policies' },
    subjects: [{ kind: 'ServiceAccount', name: 'carol', namespace: PEOPLE }],
  },
];

interface Entry {
  name: string;
  summary: string;
  detailLevel: string;
}

/** The `shop` report as the caller with this token sees it. */
async function reportFor(caller: string | undefined): Promise<Entry[]> {
  if (!cluster || baseUrl === undefined) throw new Error('the cluster or the controller did not start');
  const base = baseUrl;
  const headers: Record<string, string> = caller ? { authorization: `Bearer ${tokens[caller]}` } : {};
  const response = await fetch(`${base}/resources/reports/shop`, {
    headers,
    signal: AbortSignal.timeout(10_000),
  });
  if (response.status !== 200) throw new Error(`report: HTTP ${response.status}`);
  const body = asJsonObject(await response.json(), 'report');
  return (body.constraints as unknown[]).map((entry) => asJsonObject(entry, 'entry') as unknown as Entry);
}

const shopEntry = (entries: Entry[]) => entries.find((entry) => entry.name.startsWith('shop-team'));
const clusterNames = (entries: Entry[]) =>
  entries.map((entry) => entry.name).filter((name) => !name.startsWith('shop-team'));

beforeAll(async () => {
  requireBuiltEntries();
  cluster = await startCluster();
  const kyvernoCrds = initialCrds.filter((crd) => crd.group === 'kyverno.io');
  await kubectlOk(['apply', '-f', '-'], kyvernoCrds.map(crdManifest).join('\n---\n'));
  await kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  await kubectlOk(['create', 'namespace', SYSTEM_NAMESPACE]);
  await kubectlOk(
    ['apply', '-f', '-'],
    identitiesManifest({
      namespace: SYSTEM_NAMESPACE,
      tlsSecretName: 'forewarn-webhook-tls',
      webhookConfigurationName: 'forewarn',
    }),
  );
  const policies = [
    kyvernoPolicy('Policy', 'shop-team', 'shop'),
    kyvernoPolicy('ClusterPolicy', CLUSTER_POLICY, undefined, 'Audit'),
  ];
  await kubectlOk(
    ['apply', '-f', '-'],
    [...rbacObjects, ...policies].map((item) => JSON.stringify(item)).join('\n'),
  );
  const kubeconfig = await cluster.serviceAccountKubeconfig(SYSTEM_NAMESPACE, controllerServiceAccount, 3600);
  controller = launchController(cluster, {
    kubeconfig,
    detailLevel: 'summary',
    extraArgs: ['--api-auth', 'tokenreview', '--caller-rbac-ttl', `${TTL_SECONDS}s`],
  });
  baseUrl = (await controllerReady(controller)).api.baseUrl;
  for (const name of ['alice', 'bob', 'carol'])
    tokens[name] = (await kubectlOk(['create', 'token', name, '-n', PEOPLE, '--duration=3600s'])).trim();
  await waitFor(async () => (await reportFor(undefined)).length === 2, 30_000, {
    description: 'both Kyverno rules in the report of shop',
  });
});

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

test("a Role that reads shop's Policies shows its rule message at summary; another caller sees what everyone sees", async () => {
  const alice = await reportFor('alice');
  const bob = await reportFor('bob');
  const anonymous = await reportFor(undefined);
  expect(shopEntry(alice)).toMatchObject({ detailLevel: 'full' });
  expect(shopEntry(alice)?.summary).toContain(SHOP_MESSAGE);
  for (const entries of [bob, anonymous]) {
    expect(shopEntry(entries)).toMatchObject({ detailLevel: 'summary' });
    expect(JSON.stringify(entries)).not.toContain(SHOP_MESSAGE);
  }
  expect(bob).toEqual(anonymous);
  // Alice's Role does not reach the ClusterPolicy.
  expect(clusterNames(alice)).toEqual(['redacted']);
  expect(JSON.stringify(alice)).not.toContain(CLUSTER_POLICY);
});

test('a ClusterRole with get on ClusterPolicies reveals them; deleting the binding hides them within the TTL', async () => {
  const carol = await reportFor('carol');
  expect(clusterNames(carol)).toEqual([`${CLUSTER_POLICY}/${CLUSTER_POLICY}-rule`]);
  expect(carol.find((entry) => entry.name.startsWith(CLUSTER_POLICY))?.detailLevel).toBe('full');
  // Carol cannot read shop's Policy: its message stays hidden from her.
  expect(JSON.stringify(carol)).not.toContain(SHOP_MESSAGE);
  for (const other of ['alice', 'bob']) expect(clusterNames(await reportFor(other))).toEqual(['redacted']);

  await kubectlOk(['delete', 'clusterrolebinding', 'carol-reads-cluster-policies']);
  const revokedAt = Date.now();
  await waitFor(
    async () => clusterNames(await reportFor('carol'))[0] === 'redacted',
    (TTL_SECONDS + 5) * 1000,
    {
      description: 'the ClusterPolicy hidden from carol again',
      intervalMs: 250,
    },
  );
  // Within the TTL (plus the time the API server's authorizer takes to see the deletion).
  expect(Date.now() - revokedAt).toBeLessThan((TTL_SECONDS + 3) * 1000);
});

test("the controller's reviews pass the component's own RBAC", () => {
  const log = controller?.tail(2_000) ?? '';
  expect(authorizationErrors(log)).toEqual([]);
  expect(log).not.toContain('SubjectAccessReview failed');
  expect(log).not.toContain('TokenReview of a caller failed');
});
