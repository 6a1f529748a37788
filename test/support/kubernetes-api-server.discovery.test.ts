import {
  AdmissionregistrationV1Api,
  ApiextensionsV1Api,
  ApisApi,
  AppsV1Api,
  CoreApi,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  VersionApi,
  Watch,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { KubernetesApiTestServer } from './kubernetes-api-server';
import { errorBody, errorCode, waitUntil, rejection } from './kubernetes-api/wait-until';

// Discovery documents and CustomResourceDefinitions, read with the real client: a cluster source
// decides what to watch from exactly these answers, so their shape must be the real server's.

let server: KubernetesApiTestServer;
let kubeConfig: KubeConfig;

beforeEach(async () => {
  server = new KubernetesApiTestServer();
  await server.start();
  kubeConfig = server.kubeConfig();
});

afterEach(async () => {
  await server.stop();
});

function ciliumPolicyDefinition(): V1CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'ciliumnetworkpolicies.cilium.io' },
    spec: {
      group: 'cilium.io',
      names: {
        kind: 'CiliumNetworkPolicy',
        plural: 'ciliumnetworkpolicies',
        singular: 'ciliumnetworkpolicy',
        shortNames: ['cnp'],
      },
      scope: 'Namespaced',
      versions: [
        { name: 'v2alpha1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object' } } },
        {
          name: 'v2',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
          subresources: { status: {} },
        },
      ],
    },
  };
}

describe('discovery', () => {
  test('serves /api, /api/v1, /apis, /apis/{group}/{version} and /version as the real server', async () => {
    const core = await kubeConfig.makeApiClient(CoreApi).getAPIVersions();
    expect(core.versions).toEqual(['v1']);
    expect(core.serverAddressByClientCIDRs[0].serverAddress).toBe(`127.0.0.1:${server.port}`);

    const coreResources = await kubeConfig.makeApiClient(CoreV1Api).getAPIResources();
    expect(coreResources.groupVersion).toBe('v1');
    const names = coreResources.resources.map((resource) => resource.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'namespaces',
        'namespaces/status',
        'pods',
        'configmaps',
        'secrets',
        'resourcequotas',
      ]),
    );
    expect(names).not.toContain('configmaps/status');
    expect(coreResources.resources.find((resource) => resource.name === 'namespaces')).toMatchObject({
      singularName: 'namespace',
      namespaced: false,
      kind: 'Namespace',
      shortNames: ['ns'],
    });

    const groups = await kubeConfig.makeApiClient(ApisApi).getAPIVersions();
    expect(groups.groups.map((group) => group.name)).toEqual([
      'admissionregistration.k8s.io',
      'apiextensions.k8s.io',
      'apps',
      'batch',
      'networking.k8s.io',
    ]);
    expect(groups.groups.find((group) => group.name === 'apps')?.preferredVersion).toEqual({
      groupVersion: 'apps/v1',
      version: 'v1',
    });

    const apps = await kubeConfig.makeApiClient(AppsV1Api).getAPIResources();
    expect(apps.resources.find((resource) => resource.name === 'deployments')).toMatchObject({
      singularName: 'deployment',
      namespaced: true,
      kind: 'Deployment',
      verbs: expect.arrayContaining(['list', 'watch', 'patch']),
    });
    expect(apps.resources.find((resource) => resource.name === 'deployments/status')?.verbs).toEqual([
      'get',
      'patch',
      'update',
    ]);

    const admission = await kubeConfig.makeApiClient(AdmissionregistrationV1Api).getAPIResources();
    expect(admission.resources.map((resource) => resource.name)).toContain(
      'validatingadmissionpolicybindings',
    );

    const version = await kubeConfig.makeApiClient(VersionApi).getCode();
    expect(version).toMatchObject({ major: '1', minor: '30', gitVersion: 'v1.30.0' });

    const unknownGroup = await rejection(
      kubeConfig.makeApiClient(CustomObjectsApi).getAPIResources({ group: 'cilium.io', version: 'v2' }),
    );
    expect(errorCode(unknownGroup)).toBe(404);
    expect(errorBody(unknownGroup)).toMatchObject({ kind: 'Status', reason: 'NotFound' });
  });

  test('an older server without ValidatingAdmissionPolicy does not serve it', async () => {
    const older = new KubernetesApiTestServer({ validatingAdmissionPolicies: false });
    await older.start();
    try {
      const admission = await older.kubeConfig().makeApiClient(AdmissionregistrationV1Api).getAPIResources();
      const names = admission.resources.map((resource) => resource.name);
      expect(names).toContain('validatingwebhookconfigurations');
      expect(names).not.toContain('validatingadmissionpolicies');
      const missing = await rejection(
        older.kubeConfig().makeApiClient(AdmissionregistrationV1Api).listValidatingAdmissionPolicy(),
      );
      expect(errorCode(missing)).toBe(404);
    } finally {
      await older.stop();
    }
  });
});

describe('CustomResourceDefinitions', () => {
  test('a created CRD is established, discovered, and serves its objects at every served version', async () => {
    const extensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
    const created = await extensions.createCustomResourceDefinition({ body: ciliumPolicyDefinition() });
    expect(created.status?.conditions?.find((condition) => condition.type === 'Established')?.status).toBe(
      'True',
    );
    expect(created.status?.acceptedNames?.kind).toBe('CiliumNetworkPolicy');

    // client-node's models rename fields on the wire (x_kubernetes_... → x-kubernetes-...).
    const stored = server.get(
      'apiextensions.k8s.io/v1',
      'CustomResourceDefinition',
      undefined,
      'ciliumnetworkpolicies.cilium.io',
    );
    expect(JSON.stringify(stored?.spec)).toContain('"x-kubernetes-preserve-unknown-fields":true');

    const groups = await kubeConfig.makeApiClient(ApisApi).getAPIVersions();
    const cilium = groups.groups.find((group) => group.name === 'cilium.io');
    expect(cilium?.versions.map((version) => version.version)).toEqual(['v2', 'v2alpha1']);
    expect(cilium?.preferredVersion?.groupVersion).toBe('cilium.io/v2');

    const customObjects = kubeConfig.makeApiClient(CustomObjectsApi);
    const resources = await customObjects.getAPIResources({ group: 'cilium.io', version: 'v2' });
    expect(resources.resources).toEqual([
      expect.objectContaining({
        name: 'ciliumnetworkpolicies',
        kind: 'CiliumNetworkPolicy',
        namespaced: true,
      }),
      expect.objectContaining({ name: 'ciliumnetworkpolicies/status' }),
    ]);

    const coordinates = {
      group: 'cilium.io',
      version: 'v2',
      namespace: 'team-a',
      plural: 'ciliumnetworkpolicies',
    };
    await customObjects.createNamespacedCustomObject({
      ...coordinates,
      body: {
        apiVersion: 'cilium.io/v2',
        kind: 'CiliumNetworkPolicy',
        metadata: { name: 'deny-all' },
        spec: { endpointSelector: {} },
      },
    });
    const list: unknown = await customObjects.listNamespacedCustomObject(coordinates);
    // Custom resources are unstructured: their list items keep apiVersion and kind.
    expect(list).toMatchObject({
      apiVersion: 'cilium.io/v2',
      kind: 'CiliumNetworkPolicyList',
      items: [{ apiVersion: 'cilium.io/v2', kind: 'CiliumNetworkPolicy', metadata: { name: 'deny-all' } }],
    });
    const atOtherVersion: unknown = await customObjects.getNamespacedCustomObject({
      ...coordinates,
      version: 'v2alpha1',
      name: 'deny-all',
    });
    expect(atOtherVersion).toMatchObject({
      apiVersion: 'cilium.io/v2alpha1',
      metadata: { name: 'deny-all' },
    });

    const patched: unknown = await customObjects.patchNamespacedCustomObject(
      { ...coordinates, name: 'deny-all', body: { metadata: { labels: { team: 'a' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(patched).toMatchObject({ metadata: { labels: { team: 'a' } }, spec: { endpointSelector: {} } });

    // KubernetesObjectApi resolves the plural through discovery, as generic clients do.
    const objects = KubernetesObjectApi.makeApiClient(kubeConfig);
    const read = await objects.read({
      apiVersion: 'cilium.io/v2',
      kind: 'CiliumNetworkPolicy',
      metadata: { name: 'deny-all', namespace: 'team-a' },
    });
    expect(read.metadata?.labels).toEqual({ team: 'a' });
    expect(server.requests.some((request) => request.path === '/apis/cilium.io/v2')).toBe(true);
  });

  test('cluster-scoped custom resources live at /apis/{group}/{version}/{plural}/{name}', async () => {
    server.create({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'k8srequiredlabels.constraints.gatekeeper.sh' },
      spec: {
        group: 'constraints.gatekeeper.sh',
        names: { kind: 'K8sRequiredLabels', plural: 'k8srequiredlabels' },
        scope: 'Cluster',
        versions: [{ name: 'v1beta1', served: true, storage: true }],
      },
    });
    const customObjects = kubeConfig.makeApiClient(CustomObjectsApi);
    const coordinates = {
      group: 'constraints.gatekeeper.sh',
      version: 'v1beta1',
      plural: 'k8srequiredlabels',
    };
    await customObjects.createClusterCustomObject({
      ...coordinates,
      body: {
        apiVersion: 'constraints.gatekeeper.sh/v1beta1',
        kind: 'K8sRequiredLabels',
        metadata: { name: 'owner' },
      },
    });
    const read: unknown = await customObjects.getClusterCustomObject({ ...coordinates, name: 'owner' });
    expect(read).toMatchObject({ kind: 'K8sRequiredLabels', metadata: { name: 'owner' } });
    expect(read).not.toHaveProperty('metadata.namespace');
    const listed: unknown = await customObjects.listClusterCustomObject(coordinates);
    expect(listed).toMatchObject({ items: [{ metadata: { name: 'owner' } }] });
  });

  test('an invalid CRD is refused with 422 Invalid', async () => {
    const definition = ciliumPolicyDefinition();
    definition.metadata = { name: 'wrong-name.cilium.io' };
    const refused = await rejection(
      kubeConfig.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: definition }),
    );
    expect(errorBody(refused)).toMatchObject({ reason: 'Invalid', code: 422 });
  });

  test('deleting a CRD deletes its objects (DELETED to open watches, then the end) and leaves discovery', async () => {
    await kubeConfig
      .makeApiClient(ApiextensionsV1Api)
      .createCustomResourceDefinition({ body: ciliumPolicyDefinition() });
    server.create({
      apiVersion: 'cilium.io/v2',
      kind: 'CiliumNetworkPolicy',
      metadata: { name: 'deny-all', namespace: 'team-a' },
    });
    const events: string[] = [];
    let ended = false;
    const watch = await new Watch(kubeConfig).watch(
      '/apis/cilium.io/v2/ciliumnetworkpolicies',
      { resourceVersion: server.resourceVersion },
      (type, object: { metadata?: { name?: string } }) => events.push(`${type} ${object.metadata?.name}`),
      () => {
        ended = true;
      },
    );
    try {
      await server.waitForWatches({ pathIncludes: 'ciliumnetworkpolicies' });
      await kubeConfig
        .makeApiClient(ApiextensionsV1Api)
        .deleteCustomResourceDefinition({ name: 'ciliumnetworkpolicies.cilium.io' });
      await waitUntil(() => ended, 'the watch of the deleted kind ended');
      expect(events).toEqual(['DELETED deny-all']);

      const groups = await kubeConfig.makeApiClient(ApisApi).getAPIVersions();
      expect(groups.groups.map((group) => group.name)).not.toContain('cilium.io');
      const gone = await rejection(
        kubeConfig
          .makeApiClient(CustomObjectsApi)
          .listClusterCustomObject({ group: 'cilium.io', version: 'v2', plural: 'ciliumnetworkpolicies' }),
      );
      expect(errorCode(gone)).toBe(404);
    } finally {
      watch.abort();
    }
  });
});
