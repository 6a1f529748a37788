// Smoke test of the e2e harness: a current kube-apiserver (with its controller-manager) serves what the
// Forewarn tier needs (namespaces, NetworkPolicy, ResourceQuota usage computed from real Pods, a
// structural CRD, webhook registrations), the admission plugins of a real cluster run (PodSecurity,
// ValidatingAdmissionPolicy) and kubectl prints their warnings, namespace deletion and garbage
// collection finish, a fail-open webhook that points at nothing does not block, and state survives a
// SIGKILL of the API server. The tests run in order and build on each other.
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { unusedLoopbackPort } from './forewarn-support';
import { startCluster, waitFor, type Cluster, type ProcessResult } from './harness';
import {
  namespace,
  namespaceLabel,
  webhookName,
  namespaceManifest,
  networkPolicyManifest,
  resourceQuotaManifest,
  quotaPodManifest,
  warnOnlyPolicyName,
  warnOnlyAdmissionPolicyManifest,
  ciliumCrdManifest,
  ciliumPolicyManifest,
  failOpenWebhookManifest,
  configMapManifest,
} from './smoke-manifests';

let cluster: Cluster | undefined;

function requireCluster(): Cluster {
  if (!cluster) throw new Error('the cluster did not start (see beforeAll)');
  return cluster;
}

async function kubectlSucceeds(args: readonly string[], stdin?: string): Promise<ProcessResult> {
  const result = await requireCluster().kubectl(args, { stdin });
  if (result.code !== 0) {
    throw new Error(`kubectl ${args.join(' ')} exited ${result.code}:\n${result.stderr}${result.stdout}`);
  }
  return result;
}

async function kubectlJson(args: readonly string[]): Promise<Record<string, unknown>> {
  const result = await kubectlSucceeds([...args, '-o', 'json']);
  return asRecord(JSON.parse(result.stdout));
}

function asRecord(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`expected a JSON object, got ${JSON.stringify(value)}`);
  }
  return value as Record<string, unknown>;
}

function field(object: Record<string, unknown>, ...keys: string[]): unknown {
  let current: unknown = object;
  for (const key of keys) current = asRecord(current)[key];
  return current;
}

function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

beforeAll(async () => {
  const started = Date.now();
  cluster = await startCluster();
  console.log(`e2e smoke: cluster ready at ${cluster.serverUrl} in ${Date.now() - started} ms`);
});

afterAll(async () => {
  await cluster?.stop();
});

test('kubectl and the API server are one current Kubernetes release (1.33 or newer)', async () => {
  const expected = requireCluster().kubernetesVersion;
  const versions = await kubectlJson(['version']);
  expect(field(versions, 'clientVersion', 'gitVersion')).toBe(expected);
  expect(field(versions, 'serverVersion', 'gitVersion')).toBe(expected);
  const match = /^v1\.(\d+)\.\d+$/.exec(expected);
  expect(Number(match?.[1])).toBeGreaterThanOrEqual(33);
});

test('kubectl creates a labelled namespace and applies a NetworkPolicy and a ResourceQuota', async () => {
  await kubectlSucceeds(['apply', '-f', '-'], namespaceManifest);
  await kubectlSucceeds(['apply', '-f', '-'], networkPolicyManifest + '---' + resourceQuotaManifest);

  const namespaceObject = await kubectlJson(['get', 'namespace', namespace]);
  expect(field(namespaceObject, 'metadata', 'labels', namespaceLabel)).toBe('true');
  const policy = await kubectlJson(['-n', namespace, 'get', 'networkpolicy', 'default-deny-ingress']);
  expect(field(policy, 'spec', 'policyTypes')).toEqual(['Ingress']);
  const quota = await kubectlJson(['-n', namespace, 'get', 'resourcequota', 'compute']);
  expect(field(quota, 'spec', 'hard', 'pods')).toBe('10');
});

test('a Pod counts toward the ResourceQuota (controller-manager) and gets a PodSecurity warning', async () => {
  // The ServiceAccount admission plugin needs the namespace's `default` ServiceAccount, which the
  // controller-manager creates a moment after the namespace.
  const created = await waitFor(
    async () => {
      const result = await requireCluster().kubectl(['apply', '-f', '-'], { stdin: quotaPodManifest });
      return result.code === 0 ? result : undefined;
    },
    30_000,
    { description: 'kubectl apply of a Pod (the default ServiceAccount may lag)', intervalMs: 500 },
  );
  expect(created.stderr).toMatch(/^Warning: would violate PodSecurity "restricted:latest"/m);

  const quota = await waitFor(
    async () => {
      const current = await kubectlJson(['-n', namespace, 'get', 'resourcequota', 'compute']);
      return field(current, 'status', 'used', 'pods') === '1' ? current : undefined;
    },
    30_000,
    { description: 'the quota controller to count the Pod', intervalMs: 500 },
  );
  expect(field(quota, 'status', 'used', 'requests.cpu')).toBe('500m');
  expect(field(quota, 'status', 'used', 'limits.memory')).toBe('1Gi');
  expect(field(quota, 'status', 'hard', 'requests.cpu')).toBe('2');
});

test('a structural CRD (cilium.io/v2 CiliumNetworkPolicy) installs and serves objects', async () => {
  await kubectlSucceeds(['apply', '-f', '-'], ciliumCrdManifest);
  await kubectlSucceeds([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'customresourcedefinition/ciliumnetworkpolicies.cilium.io',
  ]);
  // kubectl's discovery may lag the new group by a moment: retry the apply until it is known.
  await waitFor(
    async () =>
      (await requireCluster().kubectl(['apply', '-f', '-'], { stdin: ciliumPolicyManifest })).code === 0,
    30_000,
    {
      description: 'kubectl apply of a CiliumNetworkPolicy',
      intervalMs: 500,
    },
  );
  const policy = await kubectlJson([
    '-n',
    namespace,
    'get',
    'ciliumnetworkpolicies.cilium.io',
    'allow-dns-only',
  ]);
  expect(field(policy, 'spec', 'endpointSelector')).toEqual({});
});

test('kubectl prints admission warnings (a Warn-only ValidatingAdmissionPolicy) as "Warning: ..." lines', async () => {
  // The same Warning header channel admission webhooks' warnings travel through.
  await kubectlSucceeds(['apply', '-f', '-'], warnOnlyAdmissionPolicyManifest);
  let attempt = 0;
  const warned = await waitFor(
    async () => {
      attempt += 1;
      const result = await kubectlSucceeds(['apply', '-f', '-'], configMapManifest(`unowned-${attempt}`));
      return result.stderr.includes(warnOnlyPolicyName) ? result : undefined;
    },
    30_000,
    { description: 'the API server to load the ValidatingAdmissionPolicy', intervalMs: 500 },
  );
  expect(warned.stderr).toMatch(
    new RegExp(
      `^Warning: Validation failed for ValidatingAdmissionPolicy '${warnOnlyPolicyName}'.*ConfigMaps need an owner label`,
      'm',
    ),
  );
  await kubectlSucceeds(['delete', 'validatingadmissionpolicybinding', warnOnlyPolicyName]);
});

test('namespace deletion and garbage collection finish (controller-manager)', async () => {
  const doomed = 'forewarn-smoke-doomed';
  await kubectlSucceeds(['create', 'namespace', doomed]);
  await kubectlSucceeds(['-n', doomed, 'create', 'configmap', 'leftover', '--from-literal=a=b']);
  await kubectlSucceeds([
    '-n',
    doomed,
    'create',
    'deployment',
    'web',
    '--image=registry.example.com/web:1.0',
  ]);
  const replicaSets = await waitFor(
    async () => {
      const list = await kubectlJson(['-n', doomed, 'get', 'replicasets']);
      return Array.isArray(list.items) && list.items.length > 0 ? list.items : undefined;
    },
    30_000,
    { description: 'the Deployment controller to create a ReplicaSet', intervalMs: 500 },
  );
  expect(replicaSets).toHaveLength(1);
  await kubectlSucceeds(['-n', doomed, 'delete', 'deployment', 'web', '--cascade=background']);
  await waitFor(
    async () => {
      const list = await kubectlJson(['-n', doomed, 'get', 'replicasets']);
      return Array.isArray(list.items) && list.items.length === 0;
    },
    30_000,
    { description: 'the garbage collector to delete the orphaned ReplicaSet', intervalMs: 500 },
  );
  const deletion = await requireCluster().kubectl(['delete', 'namespace', doomed, '--timeout=60s']);
  expect(deletion.code).toBe(0);
  const gone = await requireCluster().kubectl(['get', 'namespace', doomed]);
  expect(gone.stderr).toContain('NotFound');
});

test('a fail-open webhook (failurePolicy Ignore) pointing at nothing does not block kubectl apply', async () => {
  const port = await unusedLoopbackPort();
  await kubectlSucceeds(['apply', '-f', '-'], failOpenWebhookManifest(port));

  // The API server picks the registration up asynchronously: apply ConfigMaps until its log shows it
  // called the webhook and failed open. Every apply must succeed, and quickly.
  let attempt = 0;
  await waitFor(
    async () => {
      attempt += 1;
      const started = Date.now();
      await kubectlSucceeds(['apply', '-f', '-'], configMapManifest(`fail-open-${attempt}`));
      expect(Date.now() - started).toBeLessThan(10_000);
      const log = await requireCluster().readApiServerLog();
      return log.includes('failing open') && log.includes(webhookName);
    },
    30_000,
    { description: 'the API server to call the unreachable webhook and fail open', intervalMs: 500 },
  );
  const configMap = await kubectlJson(['-n', namespace, 'get', 'configmap', `fail-open-${attempt}`]);
  expect(field(configMap, 'data', 'purpose')).toBe('fail-open check');
});

test('state survives a SIGKILL of the API server and a restart on the same port', async () => {
  const running = requireCluster();
  await running.killApiServer();
  const whileDown = await running.kubectl(['get', 'namespace', namespace, '--request-timeout=5s']);
  expect(whileDown.code).not.toBe(0);

  const started = Date.now();
  await running.startApiServer();
  console.log(`e2e smoke: API server restarted and ready in ${Date.now() - started} ms`);

  const namespaceObject = await kubectlJson(['get', 'namespace', namespace]);
  expect(field(namespaceObject, 'metadata', 'labels', namespaceLabel)).toBe('true');
  await kubectlSucceeds(['-n', namespace, 'get', 'networkpolicy', 'default-deny-ingress']);
  const quota = await kubectlJson(['-n', namespace, 'get', 'resourcequota', 'compute']);
  expect(field(quota, 'status', 'used', 'pods')).toBe('1');
  const policy = await waitFor(
    async () => {
      const result = await running.kubectl([
        '-n',
        namespace,
        'get',
        'ciliumnetworkpolicies.cilium.io',
        'allow-dns-only',
      ]);
      return result.code === 0;
    },
    30_000,
    { description: 'the CRD to be served again after the restart', intervalMs: 500 },
  );
  expect(policy).toBe(true);
  await kubectlSucceeds(['get', 'validatingwebhookconfiguration', 'forewarn-smoke-fail-open']);
});

test('stop() removes the data dir and can be called twice', async () => {
  const running = requireCluster();
  await running.stop();
  await running.stop();
  expect(existsSync(running.dataDir)).toBe(false);
  expect(await acceptsConnections(running.apiPort)).toBe(false);
});
