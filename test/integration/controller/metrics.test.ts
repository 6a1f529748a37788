import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parseControllerConfig } from '../../../services/controller/config';
import { startController, type RunningController } from '../../../services/controller/runtime';
import { ManifestFileSource } from '../../../services/controller/sources/manifest-files';
import { silentLogger } from '../../../services/logging/logger';
import { startClusterController } from '../../support/cluster-controller';
import { KubernetesApiTestServer } from '../../support/kubernetes-api-server';
import { waitUntil } from '../../support/kubernetes-api/wait-until';

// `/metrics` of a running controller, scraped before and after traffic and changes: the values
// must move by what happened, not merely exist.

const DEMO_MANIFESTS = path.join(__dirname, '../../../examples/manifests');

type Samples = Map<string, number>;

/** Parses the text exposition format into `name{labels}` → value (labels as printed). */
function parseMetrics(text: string): Samples {
  const samples: Samples = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const separator = line.lastIndexOf(' ');
    samples.set(line.slice(0, separator), Number(line.slice(separator + 1)));
  }
  return samples;
}

async function scrape(controller: RunningController): Promise<Samples> {
  const response = await fetch(`http://127.0.0.1:${controller.port}/metrics`);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
  return parseMetrics(await response.text());
}

function value(samples: Samples, series: string): number {
  const found = samples.get(series);
  if (found === undefined) throw new Error(`no sample ${series}`);
  return found;
}

function sum(samples: Samples, name: string): number {
  let total = 0;
  for (const [series, sample] of samples)
    if (series === name || series.startsWith(`${name}{`)) total += sample;
  return total;
}

const eventually = (check: () => Promise<boolean>, what: string, timeoutMs = 5_000) =>
  waitUntil(check, what, timeoutMs, 25);

describe('controller /metrics with the manifests source', () => {
  let directory: string;
  let controller: RunningController;

  beforeAll(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'forewarn-metrics-'));
    await cp(DEMO_MANIFESTS, directory, { recursive: true });
    const config = parseControllerConfig(
      ['--manifests', directory, '--address', '127.0.0.1', '--port', '0', '--mcp-port', '0'],
      {},
    );
    controller = await startController(config, silentLogger());
  });

  afterAll(async () => {
    await controller?.close();
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  const settled = async () => {
    if (controller.source instanceof ManifestFileSource) await controller.source.settled();
  };

  it('exports the index by type and severity, matching the index itself', async () => {
    const samples = await scrape(controller);
    expect(sum(samples, 'forewarn_constraints')).toBe(controller.index.totalConstraints());
    expect(value(samples, 'forewarn_constraints{type="ResourceLimit",severity="Critical"}')).toBe(1);
    expect(value(samples, 'forewarn_constraints{type="MissingResource",severity="Warning"}')).toBe(0);
    expect(value(samples, 'forewarn_namespaces_with_constraints')).toBe(
      controller.index.namespacesWithConstraints().length,
    );
    expect(value(samples, 'forewarn_source_synced')).toBe(1);
    expect(value(samples, 'forewarn_health_status{status="healthy"}')).toBe(1);
    expect(value(samples, 'forewarn_last_scan_timestamp_seconds')).toBe(
      (controller.runtimeState().source.lastScan?.getTime() ?? 0) / 1000,
    );
    expect(samples.has('process_cpu_seconds_total')).toBe(true);
  });

  it('counts HTTP requests by route template and status', async () => {
    const route = 'route="/resources/reports/:namespace",method="GET",status="200"';
    const notFound = 'route="/resources/constraints/:namespace/*name",method="GET",status="404"';
    const before = await scrape(controller);
    const base = `http://127.0.0.1:${controller.port}`;
    for (const namespace of ['shop', 'payments', 'sandbox'])
      await fetch(`${base}/resources/reports/${namespace}`);
    await fetch(`${base}/resources/constraints/shop/no-such-policy`);
    const after = await scrape(controller);
    const count = (samples: Samples, series: string) => samples.get(series) ?? 0;
    expect(
      count(after, `forewarn_http_requests_total{${route}}`) -
        count(before, `forewarn_http_requests_total{${route}}`),
    ).toBe(3);
    expect(
      count(after, `forewarn_http_requests_total{${notFound}}`) -
        count(before, `forewarn_http_requests_total{${notFound}}`),
    ).toBe(1);
    const histogram = 'forewarn_http_request_duration_seconds_count{route="/resources/reports/:namespace"}';
    expect(count(after, histogram) - count(before, histogram)).toBe(3);
  });

  it('follows the index when files change: new constraints, a new namespace, a later scan', async () => {
    const before = await scrape(controller);
    await writeFile(
      path.join(directory, 'billing.yaml'),
      `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: { name: deny-in, namespace: billing }
spec: { podSelector: {}, policyTypes: [Ingress] }
`,
    );
    await settled();
    await eventually(
      async () =>
        value(await scrape(controller), 'forewarn_namespaces_with_constraints') >
        value(before, 'forewarn_namespaces_with_constraints'),
      'the billing namespace',
    );
    const after = await scrape(controller);
    const series = 'forewarn_constraints{type="NetworkIngress",severity="Warning"}';
    expect(value(after, series) - value(before, series)).toBe(1);
    expect(
      value(after, 'forewarn_namespaces_with_constraints') -
        value(before, 'forewarn_namespaces_with_constraints'),
    ).toBe(1);
    expect(value(after, 'forewarn_last_scan_timestamp_seconds')).toBeGreaterThan(
      value(before, 'forewarn_last_scan_timestamp_seconds'),
    );
  });

  it('counts parse errors per adapter and shows the problem in health', async () => {
    const errors = 'forewarn_parse_errors_total{adapter="networkpolicy"}';
    const before = await scrape(controller);
    await writeFile(
      path.join(directory, 'bad-policy.yaml'),
      `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: { name: bad, namespace: billing }
spec:
  podSelector:
    matchExpressions: [{ key: app, operator: Sometimes, values: [a] }]
`,
    );
    await settled();
    await eventually(
      async () => value(await scrape(controller), errors) > value(before, errors),
      'the parse error',
    );
    const after = await scrape(controller);
    expect(value(after, errors) - value(before, errors)).toBe(1);
    expect(value(after, 'forewarn_health_problems') - value(before, 'forewarn_health_problems')).toBe(1);
    expect(value(after, 'forewarn_health_status{status="degraded"}')).toBe(1);
    expect(value(after, 'forewarn_parse_errors_total{adapter="resourcequota"}')).toBe(0);
  });

  it('counts open MCP sessions by transport', async () => {
    const series = 'forewarn_mcp_sessions{transport="streamable-http"}';
    expect(value(await scrape(controller), series)).toBe(0);
    const client = new Client({ name: 'metrics-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${controller.mcp?.port}/mcp`)),
    );
    try {
      expect(value(await scrape(controller), series)).toBe(1);
    } finally {
      await client.close();
    }
  });
});

describe('controller /metrics with the cluster source', () => {
  let server: KubernetesApiTestServer;
  let controller: RunningController;

  beforeAll(async () => {
    server = new KubernetesApiTestServer({ bookmarkIntervalMs: 200 });
    await server.start();
    server.create({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'deny-in', namespace: 'default' },
      spec: { podSelector: {}, policyTypes: ['Ingress'] },
    });
    controller = await startClusterController(server, {
      timing: {
        backoffInitialMs: 20,
        backoffMaxMs: 100,
        watchTimeoutSeconds: 30,
        inactivityMs: 5_000,
        listPageSize: 50,
      },
      syncWaitMs: 2_000,
    });
  });

  afterAll(async () => {
    await controller?.close();
    await server?.stop();
  });

  it('counts watch errors and restarts of the failing adapter only', async () => {
    const errors = (adapter: string) => `forewarn_watch_errors_total{adapter="${adapter}"}`;
    const restarts = 'forewarn_watch_restarts_total{adapter="networkpolicy",cause="failure"}';
    const before = await scrape(controller);
    expect(value(before, errors('networkpolicy'))).toBe(0);
    await server.waitForWatches({}, 1);
    server.failNext({ pathIncludes: '/networkpolicies', status: 500, times: 3 });
    server.dropWatches({ pathIncludes: '/networkpolicies' });
    await eventually(
      async () =>
        (await scrape(controller)).get(restarts) === 3 &&
        controller.runtimeState().source.adapters.networkpolicy?.watchFailing === false,
      'three failures and a recovery',
    );
    const after = await scrape(controller);
    expect(value(after, errors('networkpolicy'))).toBe(3);
    expect(value(after, errors('resourcequota'))).toBe(0);
    expect(value(after, 'forewarn_health_status{status="healthy"}')).toBe(1);
    expect(value(after, 'forewarn_constraints{type="NetworkIngress",severity="Warning"}')).toBe(1);
  });
});
