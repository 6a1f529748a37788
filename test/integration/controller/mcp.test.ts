import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Capabilities, Health, Report } from '../../../services/model/api';
import type { RunningController } from '../../../services/controller/runtime';
import type { ManifestCheckReport } from '../../../services/controller/check/manifest-check';
import type { ExplainResult } from '../../../services/controller/mcp/explain';
import type { QueryResult } from '../../../services/controller/mcp/query';
import { RESOURCE_NOT_FOUND } from '../../../services/controller/mcp/resources';
import { buildWarnings } from '../../../services/model/warnings';
import type { KubernetesObject } from '../../../services/model/kubernetes';
import { buildAdmissionCheck } from '../../../services/controller/verdicts/admission-check';
import { parse } from 'yaml';
import {
  connectClient,
  httpText,
  readResourceText,
  startDemoController,
  toolJson,
  toolText,
  type TransportName,
} from './mcp-support';

// The MCP server with the SDK's own client over both transports, against a real controller on the
// demo cluster: every resource is the HTTP body byte for byte, every tool answers.

const TRANSPORTS: TransportName[] = ['sse', 'streamable-http'];

const CHECKED_MANIFEST = `
apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: shop
spec:
  selector:
    matchLabels: { app: api }
  template:
    metadata:
      labels: { app: api, tier: backend }
    spec:
      containers:
        - name: api
          image: registry.example.com/shop/api:2.4.0
`;

describe.each(TRANSPORTS)('MCP server over %s', (transport) => {
  let controller: RunningController;
  let client: Client;

  beforeAll(async () => {
    controller = await startDemoController();
    client = await connectClient(controller, transport);
  });

  afterAll(async () => {
    await client?.close();
    await controller?.close();
  });

  const call = (name: string, args: Record<string, unknown>) =>
    client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

  it('lists the fixed resources, one report per namespace, and both templates', async () => {
    const { resources } = await client.listResources();
    const uris = resources.map((resource) => resource.uri);
    expect(uris).toEqual(
      expect.arrayContaining([
        'forewarn://health',
        'forewarn://capabilities',
        'forewarn://reports/shop',
        'forewarn://reports/payments',
        'forewarn://reports/sandbox',
      ]),
    );
    expect(resources.every((resource) => resource.mimeType === 'application/json')).toBe(true);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate).sort()).toEqual([
      'forewarn://constraints/{namespace}/{+name}',
      'forewarn://references/{ref}',
      'forewarn://reports/{namespace}',
      'forewarn://risks/{namespace}',
    ]);
  });

  it.each([
    ['forewarn://reports/shop', '/resources/reports/shop'],
    ['forewarn://reports/sandbox', '/resources/reports/sandbox'],
    [
      'forewarn://constraints/shop/api-allow-frontend/ingress',
      '/resources/constraints/shop/api-allow-frontend/ingress',
    ],
    [
      'forewarn://constraints/shop/api-allow-frontend%2Fegress',
      '/resources/constraints/shop/api-allow-frontend/egress',
    ],
    ['forewarn://constraints/shop/compute', '/resources/constraints/shop/compute'],
    ['forewarn://constraints/shop/default-deny-ingress', '/resources/constraints/shop/default-deny-ingress'],
    ['forewarn://health', '/resources/health'],
    ['forewarn://capabilities', '/resources/capabilities'],
  ])('reads %s as exactly the HTTP body of %s', async (uri, httpPath) => {
    const { contents } = await client.readResource({ uri });
    expect(contents).toHaveLength(1);
    expect(contents[0].mimeType).toBe('application/json');
    expect(await readResourceText(client, uri)).toBe(await httpText(controller, httpPath));
  });

  it('applies the detail level and reflects the real MCP state in health and capabilities', async () => {
    const report = JSON.parse(await readResourceText(client, 'forewarn://reports/shop')) as Report;
    expect(report.detailLevel).toBe('summary');
    expect(report.constraints.map((entry) => entry.name)).not.toContain('block-cloud-metadata');
    const health = JSON.parse(await readResourceText(client, 'forewarn://health')) as Health;
    expect(health.mcp).toEqual({ enabled: true, transport: 'sse', port: controller.mcp?.port });
    const capabilities = JSON.parse(
      await readResourceText(client, 'forewarn://capabilities'),
    ) as Capabilities;
    expect(capabilities.mcpEnabled).toBe(true);
  });

  it('answers a missing or hidden constraint with the MCP "resource not found" error', async () => {
    // Cluster-scoped names are hidden at summary level: guessing one cannot confirm it either.
    const hidden = await client
      .readResource({ uri: 'forewarn://constraints/shop/block-cloud-metadata' })
      .catch((error) => error);
    expect((hidden as McpError).code).toBe(RESOURCE_NOT_FOUND);
    const failure = await client
      .readResource({ uri: 'forewarn://constraints/shop/no-such-policy' })
      .catch((error) => error);
    expect(failure).toBeInstanceOf(McpError);
    expect((failure as McpError).code).toBe(RESOURCE_NOT_FOUND);
    expect((failure as McpError).message).toMatch(/constraint shop\/no-such-policy not found/);
  });

  it('gives redacted names their reference, resolved by forewarn://references/{ref} at full only', async () => {
    const report = JSON.parse(await readResourceText(client, 'forewarn://reports/shop')) as Report;
    const ref = report.constraints.find((entry) => entry.ref)?.ref ?? '';
    expect(ref).toMatch(/^fw-[0-9a-f]{16}$/);
    // This controller serves `summary`: the lookup is refused with the reason.
    const refused = await client
      .readResource({ uri: `forewarn://references/${ref}` })
      .catch((error) => error);
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).message).toMatch(/needs the full detail level/);
    const named = controller.index.allConstraints().find((constraint) => constraint.ref === ref);
    const full = await startDemoController('full');
    try {
      // Another process with its own random key: the same constraint has another reference there.
      const fullClient = await connectClient(full, transport);
      const fullRef = full.index.allConstraints().find((constraint) => constraint.id === named?.id)?.ref;
      const found = JSON.parse(await readResourceText(fullClient, `forewarn://references/${fullRef}`)) as {
        name: string;
      };
      expect(found.name).toBe(named?.name);
      await fullClient.close();
    } finally {
      await full.close();
    }
  });

  it('completes namespaces and the visible constraint names of a namespace', async () => {
    const namespaces = await client.complete({
      ref: { type: 'ref/resource', uri: 'forewarn://reports/{namespace}' },
      argument: { name: 'namespace', value: 'pa' },
    });
    expect(namespaces.completion.values).toEqual(['payments']);
    const names = await client.complete({
      ref: { type: 'ref/resource', uri: 'forewarn://constraints/{namespace}/{+name}' },
      argument: { name: 'name', value: 'api-' },
      context: { arguments: { namespace: 'shop' } },
    });
    expect(names.completion.values).toEqual(['api-allow-frontend/egress', 'api-allow-frontend/ingress']);
  });

  it('lists the tools with their input schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['check', 'explain', 'impact', 'query', 'risks']);
    const query = tools.find((tool) => tool.name === 'query');
    expect(query?.inputSchema.required).toEqual(['namespace']);
    expect(Object.keys(query?.inputSchema.properties ?? {}).sort()).toEqual([
      'labels',
      'namespace',
      'severity',
      'type',
    ]);
    expect(tools.every((tool) => tool.annotations?.readOnlyHint === true)).toBe(true);
  });

  it('query narrows to what selects a workload, by type and severity', async () => {
    const result = toolJson<QueryResult>(
      await call('query', { namespace: 'shop', labels: { app: 'api' }, type: 'NetworkIngress' }),
    );
    expect(result.constraints.map((entry) => entry.name)).toEqual([
      'api-allow-frontend/ingress',
      'default-deny-ingress',
    ]);
    expect(result.matchCount).toBe(2);
    expect(result.constraints[0].summary).toMatch(/allows ingress/);
    const critical = toolJson<QueryResult>(await call('query', { namespace: 'shop', severity: 'Critical' }));
    expect(critical.constraints.length).toBeGreaterThan(0);
    expect(critical.constraints.every((entry) => entry.severity === 'Critical')).toBe(true);
    const invalid = await call('query', { namespace: 'Not_A_Namespace' });
    expect(invalid.isError).toBe(true);
  });

  it('explain picks the network constraints for a connection timeout', async () => {
    const result = toolJson<ExplainResult>(
      await call('explain', { message: 'dial tcp 10.0.0.5:5432: i/o timeout', namespace: 'shop' }),
    );
    expect(result.verdict).toBe('likely-causes');
    expect(result.categories).toContain('network');
    expect(result.candidates.length).toBeGreaterThan(2);
    expect(result.candidates[0].type).toBe('NetworkEgress');
    const networkTypes = new Set(['NetworkEgress', 'NetworkIngress', 'MeshPolicy']);
    expect(result.candidates.every((candidate) => networkTypes.has(candidate.type))).toBe(true);
    // Summary level: the cluster-wide Cilium policy is a candidate, but its name stays hidden.
    expect(JSON.stringify(result)).not.toContain('block-cloud-metadata');
  });

  it('explain picks the quota named by an "exceeded quota" message', async () => {
    const result = toolJson<ExplainResult>(
      await call('explain', {
        message:
          'pods "api-7d9f" is forbidden: exceeded quota: compute, requested: requests.memory=1Gi, used: requests.memory=7680Mi, limited: requests.memory=8Gi',
        namespace: 'shop',
      }),
    );
    expect(result.verdict).toBe('likely-causes');
    expect(result.categories).toEqual(['quota']);
    expect(result.candidates[0]).toMatchObject({
      name: 'compute',
      type: 'ResourceLimit',
      source: 'ResourceQuota',
      confidence: 'high',
    });
    expect(result.candidates[0].reasons.join(' ')).toMatch(/quota "compute".*requests\.memory/);
  });

  it('explain says when it cannot tell, and when the cause is outside Forewarn', async () => {
    const unknown = toolJson<ExplainResult>(
      await call('explain', {
        message: 'panic: runtime error: index out of range [3] with length 3',
        namespace: 'shop',
      }),
    );
    expect(unknown).toMatchObject({ verdict: 'cannot-tell', candidates: [] });
    expect(unknown.explanation).toMatch(/cannot tell/);
    const rbac = toolJson<ExplainResult>(
      await call('explain', {
        message:
          'deployments.apps is forbidden: User "dev" cannot create resource "deployments" in API group "apps" in the namespace "shop"',
        namespace: 'shop',
      }),
    );
    expect(rbac).toMatchObject({ verdict: 'outside-forewarn', categories: ['rbac'], candidates: [] });
  });

  it('check returns exactly the warnings the webhook would, without applying anything', async () => {
    const before = controller.index.totalConstraints();
    const report = toolJson<ManifestCheckReport>(await call('check', { manifest: CHECKED_MANIFEST }));
    expect(report.problems).toEqual([]);
    expect(report.objects.map((object) => [object.kind, object.skipped === undefined])).toEqual([
      // A Namespace is checked against the cluster-wide rules that target it (issue 22).
      ['Namespace', true],
      ['Deployment', true],
    ]);
    // The webhook's own request for this object: the admission check, with verdicts.
    const object = parse(CHECKED_MANIFEST.split('---')[1]) as KubernetesObject;
    const checked = buildAdmissionCheck(controller.index, { object, operation: 'CREATE' });
    const deployment = report.objects[1];
    expect(deployment.warnings).toEqual(buildWarnings(checked.constraints));
    expect(deployment.warnings[0]).toMatch(/^\[CRITICAL\] will be rejected: container "api": /);
    expect(deployment.passed.map((finding) => finding.name)).toContain('compute');
    expect(deployment.warnings.some((warning) => warning.startsWith('[CRITICAL]'))).toBe(true);
    expect(report.criticalCount).toBe(
      deployment.warnings.filter((warning) => warning.startsWith('[CRITICAL]')).length,
    );
    expect(controller.index.totalConstraints()).toBe(before);
  });

  it('check includes missing companion resources of the checked object', async () => {
    const manifest = CHECKED_MANIFEST.replace(
      '  namespace: shop\n',
      '  namespace: shop\n  annotations:\n    cert-manager.io/cluster-issuer: letsencrypt-prod\n',
    );
    const report = toolJson<ManifestCheckReport>(await call('check', { manifest }));
    const missing = report.objects[1].findings.filter(
      (finding) => finding.constraintType === 'MissingResource',
    );
    expect(missing).toHaveLength(1);
    expect(missing[0].summary).toMatch(/clusterissuers\.cert-manager\.io/);
  });

  it('check reports a broken manifest with its line', async () => {
    const result = await call('check', {
      manifest: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n',
    });
    const report = toolJson<ManifestCheckReport>(result);
    expect(report.objects).toEqual([]);
    expect(report.problems[0]).toMatchObject({ file: 'manifest', line: expect.any(Number) });
    expect(toolText(result)).toMatch(/problems/);
  });
});

describe('MCP server lifecycle', () => {
  it('is enabled only while it listens', async () => {
    const controller = await startDemoController();
    expect(controller.runtimeState().mcp).toMatchObject({ enabled: true, port: controller.mcp?.port });
    await controller.close();
    expect(controller.runtimeState().mcp.enabled).toBe(false);
  });

  it('refuses browser requests from other origins (DNS rebinding) and unknown sessions', async () => {
    const controller = await startDemoController();
    try {
      const base = `http://127.0.0.1:${controller.mcp?.port}`;
      const foreign = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { origin: 'http://evil.example', 'content-type': 'application/json' },
        body: '{}',
      });
      expect(foreign.status).toBe(403);
      const unknown = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          'mcp-session-id': 'no-such-session',
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(unknown.status).toBe(404);
    } finally {
      await controller.close();
    }
  });
});
