import {
  AdmissionregistrationV1Api,
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Deployment,
} from '@kubernetes/client-node';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubernetesApiTestServer } from './kubernetes-api-server';
import { errorBody, errorCode, rejection } from './kubernetes-api/wait-until';

// CRUD against the test server through the real @kubernetes/client-node typed clients: what the
// library sends must be understood, and what the server answers must deserialize and carry the
// Kubernetes semantics (resourceVersions, conflicts, Status errors, status subresource).

let server: KubernetesApiTestServer;
let kubeConfig: KubeConfig;
let core: CoreV1Api;

beforeEach(async () => {
  server = new KubernetesApiTestServer();
  await server.start();
  kubeConfig = server.kubeConfig();
  core = kubeConfig.makeApiClient(CoreV1Api);
});

afterEach(async () => {
  await server.stop();
});

function deployment(name: string, replicas: number): V1Deployment {
  return {
    metadata: { name, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'web', image: 'nginx' }] },
      },
    },
    status: { replicas: 99 },
  };
}

describe('KubernetesApiTestServer with the real client-node', () => {
  test('creates, reads, lists, replaces, patches and deletes a ConfigMap', async () => {
    const created = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'settings', labels: { app: 'web' } }, data: { mode: 'a' } },
    });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.namespace).toBe('default');
    expect(created.metadata?.generation).toBe(1);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(created.metadata?.resourceVersion).toBe(server.resourceVersion);

    const read = await core.readNamespacedConfigMap({ name: 'settings', namespace: 'default' });
    expect(read).toEqual(created);

    const list = await core.listNamespacedConfigMap({ namespace: 'default' });
    expect(list.kind).toBe('ConfigMapList');
    expect(list.metadata?.resourceVersion).toBe(server.resourceVersion);
    expect(list.items.map((item) => item.metadata?.name)).toEqual(['settings']);
    // The typed list encoding of a real server drops apiVersion/kind from built-in items.
    expect(list.items[0].kind).toBeUndefined();
    expect(list.items[0].apiVersion).toBeUndefined();

    const replaced = await core.replaceNamespacedConfigMap({
      name: 'settings',
      namespace: 'default',
      body: { ...read, data: { mode: 'b' } },
    });
    expect(Number(replaced.metadata?.resourceVersion)).toBeGreaterThan(
      Number(read.metadata?.resourceVersion),
    );
    expect(replaced.metadata?.uid).toBe(created.metadata?.uid);

    const stale = await rejection(
      core.replaceNamespacedConfigMap({
        name: 'settings',
        namespace: 'default',
        body: { ...read, data: { mode: 'c' } },
      }),
    );
    expect(errorCode(stale)).toBe(409);
    expect(errorBody(stale)).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Conflict',
      code: 409,
    });

    const patched = await core.patchNamespacedConfigMap(
      {
        name: 'settings',
        namespace: 'default',
        body: { metadata: { labels: { app: null, tier: 'db' } }, data: { extra: 'x' } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(patched.metadata?.labels).toEqual({ tier: 'db' });
    expect(patched.data).toEqual({ mode: 'b', extra: 'x' });

    const deleted = await core.deleteNamespacedConfigMap({ name: 'settings', namespace: 'default' });
    expect(deleted).toMatchObject({
      kind: 'Status',
      status: 'Success',
      details: { name: 'settings', kind: 'configmaps' },
    });
    const missing = await rejection(core.readNamespacedConfigMap({ name: 'settings', namespace: 'default' }));
    expect(errorCode(missing)).toBe(404);
    expect(errorBody(missing)).toMatchObject({
      reason: 'NotFound',
      message: 'configmaps "settings" not found',
    });
  });

  test('answers AlreadyExists, namespace mismatches, invalid names and unknown paths with Status errors', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'one' } } });
    const duplicate = await rejection(
      core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'one' } } }),
    );
    expect(errorBody(duplicate)).toMatchObject({ reason: 'AlreadyExists', code: 409 });

    const mismatch = await rejection(
      core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: 'two', namespace: 'other' } },
      }),
    );
    expect(errorBody(mismatch)).toMatchObject({ reason: 'BadRequest', code: 400 });

    const badName = await rejection(
      core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'Not_Valid' } } }),
    );
    expect(errorBody(badName)).toMatchObject({ reason: 'Invalid', code: 422 });

    const generated = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { generateName: 'gen-' } },
    });
    expect(generated.metadata?.name).toMatch(/^gen-[a-z0-9]{5}$/);

    const response = await fetch(`${server.url}/apis/apps/v1/namespaces/default/widgets`, {
      headers: { Authorization: `Bearer ${server.token}` },
    });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'NotFound',
    });
  });

  test('demands the bearer token of its kubeconfig', async () => {
    const anonymous = await fetch(`${server.url}/api/v1/namespaces`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    expect((await fetch(`${server.url}/version`)).status).toBe(200);
  });

  test('its kubeconfig file works for a process started with --kubeconfig FILE', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'forewarn-kubeconfig-'));
    try {
      const file = join(directory, 'config');
      writeFileSync(file, server.kubeConfigYaml());
      const fromFile = new KubeConfig();
      fromFile.loadFromFile(file);
      expect(fromFile.getCurrentCluster()).toMatchObject({ server: server.url, skipTLSVerify: true });
      const namespaces = await fromFile.makeApiClient(CoreV1Api).listNamespace();
      expect(namespaces.items.map((item) => item.metadata?.name)).toEqual([
        'default',
        'kube-node-lease',
        'kube-public',
        'kube-system',
      ]);
      expect(namespaces.items[0].metadata?.labels).toEqual({ 'kubernetes.io/metadata.name': 'default' });
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  test('replaceNamespacedSecret and patchValidatingWebhookConfiguration (JSON patch and merge patch)', async () => {
    const secret = await core.createNamespacedSecret({
      namespace: 'forewarn',
      body: { metadata: { name: 'webhook-tls' }, type: 'kubernetes.io/tls', data: { 'tls.crt': 'YQ==' } },
    });
    const rotated = await core.replaceNamespacedSecret({
      name: 'webhook-tls',
      namespace: 'forewarn',
      body: { ...secret, data: { 'tls.crt': 'Yg==' } },
    });
    expect(rotated.data).toEqual({ 'tls.crt': 'Yg==' });

    const admission = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    await admission.createValidatingWebhookConfiguration({
      body: {
        metadata: { name: 'forewarn-webhook' },
        webhooks: [
          {
            name: 'warn.forewarn.io',
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            clientConfig: { url: 'https://127.0.0.1:8443/validate', caBundle: 'b2xk' },
          },
        ],
      },
    });
    const jsonPatched = await admission.patchValidatingWebhookConfiguration(
      {
        name: 'forewarn-webhook',
        body: [
          { op: 'test', path: '/webhooks/0/clientConfig/caBundle', value: 'b2xk' },
          { op: 'replace', path: '/webhooks/0/clientConfig/caBundle', value: 'bmV3' },
          { op: 'add', path: '/metadata/labels', value: { 'app.kubernetes.io/name': 'forewarn' } },
        ],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    expect(jsonPatched.webhooks?.[0].clientConfig.caBundle).toBe('bmV3');
    expect(jsonPatched.metadata?.generation).toBe(2);

    const failedTest = await rejection(
      admission.patchValidatingWebhookConfiguration(
        {
          name: 'forewarn-webhook',
          body: [{ op: 'test', path: '/webhooks/0/clientConfig/caBundle', value: 'b2xk' }],
        },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      ),
    );
    expect(errorCode(failedTest)).toBe(422);

    const mergePatched = await admission.patchValidatingWebhookConfiguration(
      { name: 'forewarn-webhook', body: { metadata: { annotations: { rotated: 'yes' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(mergePatched.metadata?.annotations).toEqual({ rotated: 'yes' });
    expect(mergePatched.metadata?.labels).toEqual({ 'app.kubernetes.io/name': 'forewarn' });
    expect(mergePatched.metadata?.generation).toBe(2);
  });

  test('a Deployment: the main resource ignores status, /status changes only status, generation counts spec changes', async () => {
    const apps = kubeConfig.makeApiClient(AppsV1Api);
    const created = await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('web', 1),
    });
    expect(created.status).toBeUndefined();

    const withStatus = await apps.replaceNamespacedDeploymentStatus({
      name: 'web',
      namespace: 'default',
      body: {
        ...created,
        spec: { ...created.spec!, replicas: 7 },
        status: { replicas: 1, readyReplicas: 1 },
      },
    });
    expect(withStatus.status).toEqual({ replicas: 1, readyReplicas: 1 });
    expect(withStatus.spec?.replicas).toBe(1);
    expect(withStatus.metadata?.generation).toBe(1);

    const scaled = await apps.patchNamespacedDeployment(
      { name: 'web', namespace: 'default', body: { spec: { replicas: 3 }, status: { replicas: 50 } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    expect(scaled.spec?.replicas).toBe(3);
    expect(scaled.status).toEqual({ replicas: 1, readyReplicas: 1 });
    expect(scaled.metadata?.generation).toBe(2);

    // Writing the same object again is no write at all: same resourceVersion, no watch event.
    const unchanged = await apps.replaceNamespacedDeployment({
      name: 'web',
      namespace: 'default',
      body: scaled,
    });
    expect(unchanged.metadata?.resourceVersion).toBe(scaled.metadata?.resourceVersion);
  });

  test('client-node patches default to JSON patch: a merge-style body without the header is a 400', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'plain' } } });
    const refused = await rejection(
      core.patchNamespacedConfigMap({ name: 'plain', namespace: 'default', body: { data: { a: 'b' } } }),
    );
    expect(errorCode(refused)).toBe(400);
    expect(server.requests.at(-1)).toMatchObject({
      method: 'PATCH',
      contentType: 'application/json-patch+json',
    });
  });
});
