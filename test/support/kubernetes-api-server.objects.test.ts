import { CoreV1Api } from '@kubernetes/client-node';
import { KubernetesApiTestServer } from './kubernetes-api-server';
import { errorBody, errorCode, rejection } from './kubernetes-api/wait-until';

// Reads with selectors and pagination, the programmatic object API, and the namespace lifecycle,
// through the real client-node where a client is involved.

let server: KubernetesApiTestServer;
let core: CoreV1Api;

beforeEach(async () => {
  server = new KubernetesApiTestServer();
  await server.start();
  core = server.kubeConfig().makeApiClient(CoreV1Api);
});

afterEach(async () => {
  await server.stop();
});

describe('KubernetesApiTestServer objects and queries', () => {
  test('lists with label selectors, field selectors and pagination', async () => {
    const labelsByName: Record<string, Record<string, string>> = {
      a: { app: 'web', tier: 'front' },
      b: { app: 'web' },
      c: { app: 'db', tier: 'back' },
      d: {},
    };
    for (const [name, labels] of Object.entries(labelsByName)) {
      server.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'team-a', labels } });
    }
    server.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'elsewhere', namespace: 'team-b' },
    });
    const names = async (labelSelector?: string, fieldSelector?: string) =>
      (await core.listNamespacedConfigMap({ namespace: 'team-a', labelSelector, fieldSelector })).items.map(
        (item) => item.metadata?.name,
      );
    expect(await names('app=web')).toEqual(['a', 'b']);
    expect(await names('app==web,tier')).toEqual(['a']);
    expect(await names('app!=web')).toEqual(['c', 'd']);
    expect(await names('!tier')).toEqual(['b', 'd']);
    expect(await names('app in (web, db),tier notin (front)')).toEqual(['b', 'c']);
    expect(await names(undefined, 'metadata.name=c')).toEqual(['c']);
    expect(await names(undefined, 'metadata.name!=c')).toEqual(['a', 'b', 'd']);
    const everywhere = await core.listConfigMapForAllNamespaces({
      fieldSelector: 'metadata.namespace=team-b',
    });
    expect(everywhere.items.map((item) => item.metadata?.name)).toEqual(['elsewhere']);

    expect(errorCode(await rejection(names('app in ()')))).toBe(400);
    expect(errorBody(await rejection(names(undefined, 'spec.colour=red')))).toMatchObject({
      code: 400,
      message: 'field label not supported: spec.colour',
    });

    const firstPage = await core.listNamespacedConfigMap({ namespace: 'team-a', limit: 3 });
    expect(firstPage.items.map((item) => item.metadata?.name)).toEqual(['a', 'b', 'c']);
    expect(firstPage.metadata?.remainingItemCount).toBe(1);
    const secondPage = await core.listNamespacedConfigMap({
      namespace: 'team-a',
      limit: 3,
      _continue: firstPage.metadata?._continue,
    });
    expect(secondPage.items.map((item) => item.metadata?.name)).toEqual(['d']);
    expect(secondPage.metadata?._continue).toBeUndefined();
    expect(secondPage.metadata?.resourceVersion).toBe(firstPage.metadata?.resourceVersion);
  });

  test('the programmatic API and HTTP share one store; namespaces take their contents with them', async () => {
    server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
    server.create({
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'compute', namespace: 'team-a' },
      spec: { hard: { cpu: '4' } },
    });
    server.patchStatus('v1', 'ResourceQuota', 'team-a', 'compute', {
      hard: { cpu: '4' },
      used: { cpu: '3200m' },
    });
    const quota = await core.readNamespacedResourceQuota({ name: 'compute', namespace: 'team-a' });
    expect(quota.status?.used).toEqual({ cpu: '3200m' });

    const pod = await core.createNamespacedPod({
      namespace: 'team-a',
      body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
    });
    // Pods (like namespaces and custom resources) answer DELETE with the object, not a Status.
    const deletedPod = await core.deleteNamespacedPod({ name: 'p', namespace: 'team-a' });
    expect(deletedPod).toMatchObject({ kind: 'Pod', metadata: { name: 'p', uid: pod.metadata?.uid } });
    expect(server.get('v1', 'Pod', 'team-a', 'p')).toBeUndefined();

    // The server answers with the Namespace; client-node deserializes it as a V1Status (its OpenAPI
    // type), which keeps `kind` but drops the object's metadata.
    const deletedNamespace = await core.deleteNamespace({ name: 'team-a' });
    expect(deletedNamespace.kind).toBe('Namespace');
    expect(server.list('v1', 'ResourceQuota')).toEqual([]);
  });

  test('programmatic writes keep Kubernetes preconditions', () => {
    const created = server.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', namespace: 'default' },
    });
    server.update({ ...created, data: { a: '1' } });
    expect(() => server.update({ ...created, data: { a: '2' } })).toThrow(
      expect.objectContaining({ code: 409 }),
    );
    expect(() => server.create(created)).toThrow(expect.objectContaining({ reason: 'AlreadyExists' }));
    expect(() => server.get('v1', 'Widget', 'default', 'x')).toThrow(expect.objectContaining({ code: 404 }));
  });

  test('with requireExistingNamespace, creates into a missing namespace are 404 as on a real server', async () => {
    const strict = new KubernetesApiTestServer({ requireExistingNamespace: true, systemNamespaces: false });
    await strict.start();
    try {
      const strictCore = strict.kubeConfig().makeApiClient(CoreV1Api);
      const refused = await rejection(
        strictCore.createNamespacedConfigMap({ namespace: 'team-a', body: { metadata: { name: 'x' } } }),
      );
      expect(errorBody(refused)).toMatchObject({ code: 404, message: 'namespaces "team-a" not found' });
      await strictCore.createNamespace({ body: { metadata: { name: 'team-a' } } });
      await strictCore.createNamespacedConfigMap({ namespace: 'team-a', body: { metadata: { name: 'x' } } });
      expect((await strictCore.listNamespace()).items.map((item) => item.metadata?.name)).toEqual(['team-a']);
    } finally {
      await strict.stop();
    }
  });

  test('deletecollection deletes what the selector matches', async () => {
    for (const name of ['keep', 'drop-1', 'drop-2']) {
      server.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: 'default', labels: { doomed: String(name.startsWith('drop')) } },
      });
    }
    await core.deleteCollectionNamespacedConfigMap({ namespace: 'default', labelSelector: 'doomed=true' });
    expect(server.list('v1', 'ConfigMap', 'default').map((item) => item.metadata.name)).toEqual(['keep']);
  });
});
