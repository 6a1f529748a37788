// Smoke test of the e2e harness: the real kube-apiserver v1.20.2 serves what the Forewarn tier needs
// (namespaces, NetworkPolicy, ResourceQuota with /status, a structural CRD, webhook registrations),
// kubectl prints server warnings, a fail-open webhook that points at nothing does not block, and state
// survives a SIGKILL of the API server. The tests run in order and build on each other.
import { existsSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { startCluster, waitFor, type Cluster, type ProcessResult } from './harness';

const namespace = 'forewarn-smoke';
const namespaceLabel = 'forewarn.dev/e2e-smoke';
const webhookName = 'fail-open.forewarn-smoke.e2e';

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

/** A loopback port with nothing listening on it (bound, then released). */
function unusedLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
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

const namespaceManifest = `
apiVersion: v1
kind: Namespace
metadata:
  name: ${namespace}
  labels:
    ${namespaceLabel}: "true"
    team: platform
`;

const networkPolicyManifest = `
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: default-deny-ingress
  namespace: ${namespace}
spec:
  podSelector: {}
  policyTypes: [Ingress]
`;

const resourceQuotaManifest = `
apiVersion: v1
kind: ResourceQuota
metadata:
  name: compute
  namespace: ${namespace}
spec:
  hard:
    pods: "10"
    requests.cpu: "2"
    limits.memory: 4Gi
`;

const ciliumCrdManifest = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ciliumnetworkpolicies.cilium.io
spec:
  group: cilium.io
  scope: Namespaced
  names:
    kind: CiliumNetworkPolicy
    listKind: CiliumNetworkPolicyList
    plural: ciliumnetworkpolicies
    singular: ciliumnetworkpolicy
    shortNames: [cnp]
  versions:
    - name: v2
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              x-kubernetes-preserve-unknown-fields: true
            status:
              type: object
              x-kubernetes-preserve-unknown-fields: true
`;

const ciliumPolicyManifest = `
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata:
  name: allow-dns-only
  namespace: ${namespace}
spec:
  endpointSelector: {}
  egress:
    - toPorts:
        - ports:
            - port: "53"
              protocol: UDP
`;

function failOpenWebhookManifest(port: number): string {
  return `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: forewarn-smoke-fail-open
webhooks:
  - name: ${webhookName}
    clientConfig:
      url: https://127.0.0.1:${port}/validate
    failurePolicy: Ignore
    sideEffects: None
    admissionReviewVersions: [v1]
    timeoutSeconds: 5
    namespaceSelector:
      matchLabels:
        ${namespaceLabel}: "true"
    rules:
      - apiGroups: [""]
        apiVersions: [v1]
        operations: [CREATE, UPDATE]
        resources: [configmaps]
`;
}

function configMapManifest(name: string): string {
  return `
apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  namespace: ${namespace}
data:
  purpose: fail-open check
`;
}

beforeAll(async () => {
  const started = Date.now();
  cluster = await startCluster();
  console.log(`e2e smoke: cluster ready at ${cluster.serverUrl} in ${Date.now() - started} ms`);
});

afterAll(async () => {
  await cluster?.stop();
});

test('kubectl and the API server are both v1.20.2', async () => {
  const versions = await kubectlJson(['version']);
  expect(field(versions, 'clientVersion', 'gitVersion')).toBe('v1.20.2');
  expect(field(versions, 'serverVersion', 'gitVersion')).toBe('v1.20.2');
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

test('ResourceQuota status is written through /status (no controller-manager runs)', async () => {
  const statusPath = `/api/v1/namespaces/${namespace}/resourcequotas/compute/status`;
  const current = await requireCluster().apiRequest({ method: 'GET', path: statusPath });
  expect(current.statusCode).toBe(200);
  const quota = asRecord(current.json());
  const hard = field(quota, 'spec', 'hard');
  quota.status = { hard, used: { pods: '3', 'requests.cpu': '500m', 'limits.memory': '1Gi' } };

  const written = await requireCluster().apiRequest({ method: 'PUT', path: statusPath, body: quota });
  expect(written.statusCode).toBe(200);

  const reread = await kubectlJson(['-n', namespace, 'get', 'resourcequota', 'compute']);
  expect(field(reread, 'status', 'used', 'pods')).toBe('3');
  expect(field(reread, 'status', 'hard', 'requests.cpu')).toBe('2');
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

test('kubectl prints warnings from the API server as "Warning: ..." lines', async () => {
  // A deprecated API version makes the 1.20 server send a Warning header, the same channel
  // admission webhooks' warnings travel through.
  const result = await kubectlSucceeds(
    ['apply', '-f', '-'],
    `
apiVersion: networking.k8s.io/v1beta1
kind: Ingress
metadata:
  name: deprecated-ingress
  namespace: ${namespace}
spec:
  backend:
    serviceName: web
    servicePort: 80
`,
  );
  expect(result.stderr).toMatch(/^Warning: networking\.k8s\.io\/v1beta1 Ingress is deprecated/m);
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
  expect(field(quota, 'status', 'used', 'pods')).toBe('3');
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
