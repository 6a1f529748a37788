// The component's objects on a real kube-apiserver without `pulumi up`: what the component registers
// (rendered under Pulumi's mocks, exactly what the Kubernetes provider would be sent) is applied with
// server-side apply, then the controller and the webhook run as the ServiceAccounts and RBAC the
// component defines. This runs without the Pulumi providers (docs/e2e.md, "Deploy tier"): the API
// server validates every object, and every request of the processes goes through the component's own
// roles. TLS material comes from the webhook's own generator in place of @pulumi/tls's.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Forewarn, CertManagement, IssuerKind, type ForewarnArgs } from '../../infra';
import { generateSelfSignedBundle } from '../../services/webhook/certs/self-signed';
import { startCluster, waitFor, type Cluster } from '../e2e/harness';
import { requireBuiltEntries, unusedLoopbackPort } from '../e2e/forewarn-support';
import { installMocks, isKubernetes, manifest, settle, type JsonObject } from '../support/infra-harness';
import { at, kubectlJson, kubectlOk } from './deploy-support';
import {
  STACK_NAMES,
  authorizationErrors,
  startWebhookAs,
  type RunningController,
} from './forewarn-processes';
import {
  expectControllerHealthyAs,
  expectWarningsOnApply,
  installWatchedKindsAndShop,
  pointRegistrationAt,
  webhookTrust,
} from './component-checks';

let cluster: Cluster;
let workDir: string;
let controller: RunningController | undefined;
const processes: Array<{ stop: () => Promise<unknown> }> = [];

/** The Kubernetes objects the component registers for `args` (the stack's defaults when empty). */
async function renderComponent(name: string, args: ForewarnArgs): Promise<JsonObject[]> {
  const registered = installMocks();
  new Forewarn(name, args);
  await settle(registered);
  return registered.filter(isKubernetes).map(manifest) as JsonObject[];
}

/** Replaces the mocks' placeholder PEMs of the self-signed Secret and caBundle with real ones. */
async function withRealCertificates(objects: JsonObject[]): Promise<JsonObject[]> {
  const bundle = await generateSelfSignedBundle({
    serviceName: STACK_NAMES.webhook,
    namespace: STACK_NAMES.namespace,
    extraSans: [],
    now: new Date(),
  });
  const base64 = (text: string): string => Buffer.from(text).toString('base64');
  return objects.map((object) => {
    if (object.kind === 'Secret') {
      return {
        ...object,
        data: {
          'tls.crt': base64(bundle.certPem),
          'tls.key': base64(bundle.keyPem),
          'ca.crt': base64(bundle.caPem),
        },
      };
    }
    if (object.kind === 'ValidatingWebhookConfiguration') {
      const webhooks = (object.webhooks as JsonObject[]).map((webhook) => ({
        ...webhook,
        clientConfig: { ...(webhook.clientConfig as JsonObject), caBundle: base64(bundle.caPem) },
      }));
      return { ...object, webhooks };
    }
    return object;
  });
}

/** Server-side apply, namespaces first, as the provider would (field manager named like Pulumi's). */
async function applyObjects(objects: JsonObject[]): Promise<string> {
  const ordered = [
    ...objects.filter((o) => o.kind === 'Namespace'),
    ...objects.filter((o) => o.kind !== 'Namespace'),
  ];
  const list = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: ordered });
  return kubectlOk(cluster, ['apply', '--server-side', '--field-manager=pulumi-kubernetes', '-f', '-'], list);
}

beforeAll(async () => {
  requireBuiltEntries();
  cluster = await startCluster();
  workDir = await mkdtemp(path.join(tmpdir(), 'forewarn-deploy-rendered-'));
  await installWatchedKindsAndShop(cluster);
  console.log(`[deploy rendered] work dir ${workDir}`);
}, 180_000);

afterAll(async () => {
  await Promise.allSettled(processes.map((p) => p.stop()));
  await cluster?.stop();
});

test("kube-apiserver accepts every object the component renders (the stack's defaults, self-signed)", async () => {
  const objects = await withRealCertificates(
    await renderComponent('forewarn', { namespace: { name: STACK_NAMES.namespace } }),
  );
  expect(objects.map((o) => o.kind).sort()).toEqual(
    expect.arrayContaining([
      'ClusterRole',
      'ClusterRoleBinding',
      'Deployment',
      'Namespace',
      'NetworkPolicy',
      'PodDisruptionBudget',
      'Role',
      'RoleBinding',
      'Secret',
      'Service',
      'ServiceAccount',
      'ValidatingWebhookConfiguration',
    ]),
  );
  const applied = await applyObjects(objects);
  expect(applied.trim().split('\n')).toHaveLength(objects.length);
});

test("the controller, as the component's ServiceAccount, becomes healthy with no authorization error", async () => {
  controller = await expectControllerHealthyAs(cluster, workDir, processes);
});

test("the webhook, as the component's ServiceAccount, reuses the Secret and then rotates it, and kubectl apply prints warnings", async () => {
  const reuse = await startWebhookAs(cluster, workDir, {
    port: await unusedLoopbackPort(),
    controllerUrl: controller?.url ?? '',
    loopbackSan: false,
    logName: 'webhook-reuse.log',
  });
  processes.push(reuse.process);
  expect(reuse.settled.action).toBe('reused');
  await reuse.process.stop('SIGTERM');

  const port = await unusedLoopbackPort();
  // The API server has no route to a Service here: it calls the local webhook by URL (docs/e2e.md).
  await pointRegistrationAt(cluster, { url: `https://127.0.0.1:${port}/validate` });
  const rotated = await startWebhookAs(cluster, workDir, {
    port,
    controllerUrl: controller?.url ?? '',
    loopbackSan: true,
    logName: 'webhook-rotated.log',
  });
  processes.push(rotated.process);
  expect(rotated.settled.action).toBe('rotated');
  await waitFor(
    async () => {
      const trust = await webhookTrust(cluster);
      return trust.caBundle === trust.secretCa;
    },
    30_000,
    { description: "the rotated CA in the component's registration", intervalMs: 250 },
  );
  await expectWarningsOnApply(cluster);
  expect([...authorizationErrors(reuse.process), ...authorizationErrors(rotated.process)]).toEqual([]);
});

test('kube-apiserver accepts the managed-mode objects (cert-manager Certificate, inject-ca-from)', async () => {
  const objects = await renderComponent('fw-managed', {
    namespace: { name: 'fw-managed' },
    admissionWebhook: {
      certManagement: CertManagement.Managed,
      certIssuer: { issuerName: 'internal-ca', issuerKind: IssuerKind.ClusterIssuer },
    },
  });
  await applyObjects(objects);
  const certificate = await kubectlJson(cluster, [
    '-n',
    'fw-managed',
    'get',
    'certificate',
    'fw-managed-webhook',
  ]);
  expect(at(certificate, 'spec', 'secretName')).toBe('fw-managed-webhook-tls');
  const registration = await kubectlJson(cluster, [
    'get',
    'validatingwebhookconfiguration',
    'fw-managed-webhook',
  ]);
  expect(at(registration, 'metadata', 'annotations', 'cert-manager.io/inject-ca-from')).toBe(
    'fw-managed/fw-managed-webhook',
  );
});

test("kube-apiserver accepts the webhook's API server client CA: its ConfigMap, volume, mount and flags", async () => {
  const clientCa = await generateSelfSignedBundle({
    serviceName: 'kube-apiserver-client',
    namespace: 'fw-client-ca',
    extraSans: [],
    now: new Date(),
  });
  const objects = await withRealCertificates(
    await renderComponent('fw-client-ca', {
      namespace: { name: 'fw-client-ca' },
      admissionWebhook: {
        apiServerClientCa: { caCertificate: clientCa.caPem, clientNames: ['kube-apiserver'] },
      },
    }),
  );
  await applyObjects(objects);
  const configMap = await kubectlJson(cluster, [
    '-n',
    'fw-client-ca',
    'get',
    'configmap',
    'fw-client-ca-webhook-api-server-ca',
  ]);
  expect(at(configMap, 'data', 'ca.crt')).toBe(clientCa.caPem);
  const deployment = await kubectlJson(cluster, [
    '-n',
    'fw-client-ca',
    'get',
    'deployment',
    'fw-client-ca-webhook',
  ]);
  const pod = at(deployment, 'spec', 'template', 'spec') as JsonObject;
  expect(pod.volumes).toContainEqual(
    expect.objectContaining({
      name: 'api-server-ca',
      configMap: expect.objectContaining({ name: 'fw-client-ca-webhook-api-server-ca' }),
    }),
  );
  const container = (pod.containers as JsonObject[])[0];
  expect(container.volumeMounts).toContainEqual(
    expect.objectContaining({
      name: 'api-server-ca',
      mountPath: '/etc/webhook/api-server-ca',
      readOnly: true,
    }),
  );
  expect(container.args).toEqual(
    expect.arrayContaining([
      '--api-server-client-ca-file=/etc/webhook/api-server-ca/ca.crt',
      '--api-server-client-name=kube-apiserver',
    ]),
  );
});
