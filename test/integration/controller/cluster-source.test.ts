import request from 'supertest';
import { AdapterRegistry } from '../../../services/controller/adapters/registry';
import { createControllerApp } from '../../../services/controller/http/app';
import { ConstraintIndex } from '../../../services/controller/index/constraint-index';
import { Ingestor, ParseErrorCounter } from '../../../services/controller/index/ingest';
import { ClusterSource } from '../../../services/controller/sources/cluster/cluster-source';
import { buildHealth, type RuntimeState } from '../../../services/controller/views/health';
import { silentLogger } from '../../../services/logging/logger';
import { KubernetesApiTestServer } from '../../support/kubernetes-api-server';
import { EVENTUAL_BOUND_MS, waitUntil } from '../../support/kubernetes-api/wait-until';

// The cluster source with the real client library's configuration against the protocol-faithful
// test API server: changes appear, kinds come and go with their CRDs, and every fault converges to
// the server's truth without losing a delete.

const FAST = {
  backoffInitialMs: 50,
  backoffMaxMs: 300,
  watchTimeoutSeconds: 30,
  inactivityMs: 5_000,
  listPageSize: 2,
};

const ciliumCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'ciliumnetworkpolicies.cilium.io' },
  spec: {
    group: 'cilium.io',
    scope: 'Namespaced',
    names: {
      kind: 'CiliumNetworkPolicy',
      plural: 'ciliumnetworkpolicies',
      singular: 'ciliumnetworkpolicy',
      listKind: 'CiliumNetworkPolicyList',
    },
    versions: [
      {
        name: 'v2',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

function networkPolicy(name: string, namespace = 'shop', policyTypes = ['Ingress']) {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name, namespace },
    spec: { podSelector: {}, policyTypes },
  };
}

/** Polls every 20 ms; returns the elapsed time, which some tests bound. */
const eventually = (check: () => boolean, timeoutMs = EVENTUAL_BOUND_MS, what = 'condition') =>
  waitUntil(check, what, timeoutMs, 20);

describe('cluster source against the Kubernetes API test server', () => {
  let server: KubernetesApiTestServer;
  let source: ClusterSource;
  let index: ConstraintIndex;
  let parseErrors: ParseErrorCounter;

  const names = (namespace = 'shop') =>
    index
      .constraintsForNamespace(namespace)
      .map((constraint) => constraint.name)
      .sort();
  const state = (): RuntimeState => ({
    source: source.status(),
    parseErrors,
    flowObserver: { enabled: false, connected: false, address: '' },
    mcp: { enabled: false, transport: 'sse', port: 8090 },
    startedAt: new Date(0),
  });

  beforeEach(async () => {
    server = new KubernetesApiTestServer({ bookmarkIntervalMs: 200 });
    await server.start();
    server.create({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'shop', labels: { team: 'storefront' } },
    });
    for (const name of ['a', 'b', 'c', 'd', 'e']) server.create(networkPolicy(`deny-${name}`));
    index = new ConstraintIndex();
    parseErrors = new ParseErrorCounter();
    const registry = new AdapterRegistry();
    source = new ClusterSource({
      kubeConfig: server.kubeConfig(),
      sink: new Ingestor(index, registry, parseErrors),
      registry,
      logger: silentLogger(),
      rescanIntervalMs: 60_000,
      timing: FAST,
      crdRescanDelayMs: 50,
      syncWaitMs: 2_000,
    });
    await source.start();
  });

  afterEach(async () => {
    await source.stop();
    await server.stop();
  });

  it('lists everything at start (across pages) and reports healthy with a real last scan', () => {
    expect(names()).toEqual(['deny-a', 'deny-b', 'deny-c', 'deny-d', 'deny-e']);
    const status = source.status();
    expect(status).toMatchObject({ synced: true, connected: true });
    expect(source.isSynced()).toBe(true);
    expect(status.lastScan).toBeInstanceOf(Date);
    expect(status.adapters.networkpolicy).toMatchObject({
      enabled: true,
      watchedResources: 1,
      watchFailing: false,
    });
    expect(status.adapters.cni).toMatchObject({ enabled: false, watchedResources: 0 });
    expect(status.adapters.cni?.reason).toMatch(/^no served kinds: cilium\.io\/v2 CiliumNetworkPolicy/);
    expect(buildHealth(index, state(), 'full').status).toBe('healthy');
  });

  // Within the wait's bound, far under the 60 s rescan: only the watch can deliver them this soon.
  it('shows created, modified and deleted objects from the watch, through the HTTP API too', async () => {
    const app = createControllerApp({
      index,
      runtimeState: state,
      configuredDetailLevel: 'full',
      clock: () => new Date(),
      logger: silentLogger(),
    });
    server.create(networkPolicy('late'));
    await eventually(() => names().includes('late'));
    server.update(networkPolicy('late', 'shop', ['Ingress', 'Egress']));
    await eventually(() => names().includes('late/egress'));
    const report = await request(app).get('/resources/reports/shop').expect(200);
    expect(report.body.constraints.map((entry: { name: string }) => entry.name)).toContain('late/ingress');
    server.delete('networking.k8s.io/v1', 'NetworkPolicy', 'shop', 'late');
    await eventually(() => !names().some((name) => name.startsWith('late')));
  });

  it('enables an adapter when its CRD is installed and disables it, dropping constraints, when removed', async () => {
    server.create(ciliumCrd);
    await eventually(() => source.status().adapters.cni?.enabled === true, EVENTUAL_BOUND_MS, 'cni enabled');
    server.create({
      apiVersion: 'cilium.io/v2',
      kind: 'CiliumNetworkPolicy',
      metadata: { name: 'egress-lockdown', namespace: 'shop' },
      spec: { endpointSelector: {}, egressDeny: [{ toCIDR: ['10.0.0.0/8'] }] },
    });
    await eventually(() => names().includes('egress-lockdown'), EVENTUAL_BOUND_MS, 'cilium constraint');
    const scanBefore = source.status().lastScan?.getTime() ?? 0;
    server.delete(
      'apiextensions.k8s.io/v1',
      'CustomResourceDefinition',
      undefined,
      'ciliumnetworkpolicies.cilium.io',
    );
    await eventually(
      () => source.status().adapters.cni?.enabled === false,
      EVENTUAL_BOUND_MS,
      'cni disabled',
    );
    expect(names()).not.toContain('egress-lockdown');
    expect(source.status().lastScan?.getTime()).toBeGreaterThanOrEqual(scanBefore);
  });

  it('converges after dropped watches, including a delete made while disconnected', async () => {
    await server.waitForWatches({}, 1);
    server.dropWatches();
    server.delete('networking.k8s.io/v1', 'NetworkPolicy', 'shop', 'deny-a');
    server.create(networkPolicy('during-drop'));
    await eventually(
      () => !names().includes('deny-a') && names().includes('during-drop'),
      EVENTUAL_BOUND_MS,
      'convergence',
    );
  });

  it('relists on 410 Gone and deletes what vanished in the gap', async () => {
    server.setHistoryLimit(1);
    await server.waitForWatches({}, 1);
    server.dropWatches();
    server.delete('networking.k8s.io/v1', 'NetworkPolicy', 'shop', 'deny-b');
    for (let index = 0; index < 5; index++) server.create(networkPolicy(`churn-${index}`, 'other'));
    server.expireHistory();
    await eventually(() => !names().includes('deny-b'), EVENTUAL_BOUND_MS, 'deny-b gone');
    expect(names('other')).toHaveLength(5);
  });

  it('goes degraded while the API server is down and converges with no lost delete after it returns', async () => {
    await server.restart({
      whileDown: async (down) => {
        down.delete('networking.k8s.io/v1', 'NetworkPolicy', 'shop', 'deny-c');
        down.create(networkPolicy('while-down'));
      },
      downForMs: 600,
    });
    await eventually(
      () => !names().includes('deny-c') && names().includes('while-down'),
      EVENTUAL_BOUND_MS,
      'convergence after restart',
    );
    await eventually(
      () => buildHealth(index, state(), 'full').status === 'healthy',
      EVENTUAL_BOUND_MS,
      'healthy again',
    );
  });

  it('reports degraded while a watch keeps failing, then healthy once it recovers', async () => {
    server.failNext({ pathIncludes: 'networkpolicies', status: 500, times: 6 });
    server.dropWatches({ pathIncludes: 'networkpolicies' });
    await eventually(
      () => buildHealth(index, state(), 'full').status === 'degraded',
      EVENTUAL_BOUND_MS,
      'degraded',
    );
    const health = buildHealth(index, state(), 'full');
    expect(health.problems.map((problem) => problem.source)).toContain(
      'networkpolicy: watch networking.k8s.io/NetworkPolicy',
    );
    await eventually(
      () => buildHealth(index, state(), 'full').status === 'healthy',
      EVENTUAL_BOUND_MS,
      'healthy again',
    );
    expect(names()).toContain('deny-a');
  });

  it('keeps namespace labels and workload labels for selectors and affected workloads', async () => {
    server.create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [] } },
      },
    });
    await eventually(
      () => index.workloadsInNamespace('shop').some((workload) => workload.name === 'web'),
      EVENTUAL_BOUND_MS,
      'workload',
    );
    expect(index.workloadsInNamespace('shop')[0].podLabels).toEqual({ app: 'web' });
    expect(index.labelsOfNamespace('shop')).toMatchObject({
      team: 'storefront',
      'kubernetes.io/metadata.name': 'shop',
    });
  });
});
