import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { stringify } from 'yaml';
import { parseControllerConfig } from '../../../services/controller/config';
import { startController, type RunningController } from '../../../services/controller/runtime';
import { ManifestFileSource } from '../../../services/controller/sources/manifest-files';
import { kubernetesTokenReviewer } from '../../../services/controller/http/token-review';
import { kubernetesAccessReviewer } from '../../../services/controller/http/access-review';
import type { Report } from '../../../services/model/api';
import type { QueryResult } from '../../../services/controller/mcp/query';
import type { ExplainResult } from '../../../services/controller/mcp/explain';
import { silentLogger } from '../../../services/logging/logger';
import { KubernetesApiTestServer } from '../../support/kubernetes-api-server';
import { CALLER_RBAC_OBJECTS, READ_KYVERNO_POLICIES } from '../../support/caller-rbac-fixtures';
import { toolJson, type TransportName } from './mcp-support';

// Issue 24 on the MCP port: a client whose HTTP requests carry the caller's own bearer token reads
// reports and gets `query` and `explain` answers with the constraints its RBAC lets it `get` at
// full, over both transports, exactly as `GET /resources/reports` answers it; a client without a
// token, or with another user's, gets the controller's level. The whole controller runs
// (startController), so the runtime wiring of `--caller-rbac` is what is tested.

const TRANSPORTS: TransportName[] = ['sse', 'streamable-http'];
const SHOP_MESSAGE = 'pods need the team label (shop-team)';

describe('MCP follows the caller RBAC like the HTTP API', () => {
  const apiServer = new KubernetesApiTestServer();
  let directory: string;
  let controller: RunningController;
  const tokens: Record<string, string> = {};
  const clients: Client[] = [];

  beforeAll(async () => {
    await apiServer.start();
    apiServer.access.grant({
      subject: { kind: 'User', name: 'alice' },
      namespace: 'shop',
      rules: READ_KYVERNO_POLICIES,
    });
    tokens.alice = apiServer.tokens.issueUserToken({ username: 'alice' });
    tokens.bob = apiServer.tokens.issueUserToken({ username: 'bob' });
    directory = await mkdtemp(path.join(os.tmpdir(), 'forewarn-mcp-rbac-'));
    await writeFile(
      path.join(directory, 'policies.yaml'),
      CALLER_RBAC_OBJECTS.map((object) => stringify(object)).join('---\n'),
    );
    const config = parseControllerConfig(
      [
        ...['--address', '127.0.0.1', '--port', '0', '--mcp-port', '0'],
        ...['--api-auth', 'tokenreview', '--detail-level', 'summary'],
      ],
      {},
    );
    const kubeConfig = apiServer.kubeConfig();
    controller = await startController(config, silentLogger(), {
      source: (sink, registry) =>
        new ManifestFileSource({ directory, sink, registry, logger: silentLogger() }),
      reviewToken: kubernetesTokenReviewer(kubeConfig),
      reviewAccess: kubernetesAccessReviewer(kubeConfig, { timeoutMs: 1000, maxSockets: 4 }),
    });
  });

  afterAll(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await controller?.close();
    await apiServer.stop();
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  async function connect(transport: TransportName, token?: string): Promise<Client> {
    const port = controller.mcp?.port;
    if (port === undefined) throw new Error('the controller runs without MCP');
    const requestInit: RequestInit = token ? { headers: { authorization: `Bearer ${token}` } } : {};
    const client = new Client({ name: 'forewarn-test', version: '1.0.0' });
    await client.connect(
      transport === 'sse'
        ? new SSEClientTransport(new URL(`http://127.0.0.1:${port}/sse`), { requestInit })
        : new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit }),
    );
    clients.push(client);
    return client;
  }

  async function seenBy(client: Client) {
    const read = (await client.readResource({ uri: 'forewarn://reports/shop' })) as ReadResourceResult;
    const [content] = read.contents;
    const report = JSON.parse('text' in content ? content.text : '{}') as Report;
    const query = toolJson<QueryResult>(
      (await client.callTool({ name: 'query', arguments: { namespace: 'shop' } })) as CallToolResult,
    );
    const explain = toolJson<ExplainResult>(
      (await client.callTool({
        name: 'explain',
        arguments: {
          namespace: 'shop',
          message: 'admission webhook "validate.kyverno.svc" denied the request',
        },
      })) as CallToolResult,
    );
    const shop = <T extends { name: string }>(entries: T[]) =>
      entries.find((entry) => entry.name.startsWith('shop-team'));
    return {
      report: shop(report.constraints),
      query: shop(query.constraints),
      explain: shop(explain.candidates),
      text: JSON.stringify([report, query, explain]),
    };
  }

  it.each(TRANSPORTS)(
    'over %s, shows alice her namespace Policy in full, and bob what everyone sees',
    async (transport) => {
      const alice = await seenBy(await connect(transport, tokens.alice));
      expect(alice.report).toMatchObject({ detailLevel: 'full' });
      expect(alice.query).toMatchObject({ detailLevel: 'full' });
      expect(alice.report?.summary).toContain(SHOP_MESSAGE);
      expect(alice.query?.summary).toContain(SHOP_MESSAGE);
      expect(alice.explain).toMatchObject({ detailLevel: 'full' });
      // The ClusterPolicy is not hers to read.
      expect(alice.text).not.toContain('require-team');
      for (const token of [tokens.bob, undefined]) {
        const other = await seenBy(await connect(transport, token));
        expect(other.report).toMatchObject({ detailLevel: 'summary' });
        expect(other.query).toMatchObject({ detailLevel: 'summary' });
        expect(other.explain).toMatchObject({ detailLevel: 'summary' });
        expect(other.text).not.toContain(SHOP_MESSAGE);
      }
    },
  );

  it.each(TRANSPORTS)(
    'over %s, check shows alice the rule and message of her namespace Policy, and bob nothing more',
    async (transport) => {
      const manifest = stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web', namespace: 'shop' },
        spec: { containers: [{ name: 'web', image: 'nginx' }] },
      });
      const checked = async (token?: string) => {
        const client = await connect(transport, token);
        const result = await client.callTool({ name: 'check', arguments: { manifest } });
        return JSON.stringify(toolJson<unknown>(result as CallToolResult));
      };
      const alice = await checked(tokens.alice);
      expect(alice).toContain(SHOP_MESSAGE);
      expect(alice).toContain('"detailLevel":"full"');
      expect(alice).not.toContain('require-team');
      for (const token of [tokens.bob, undefined]) {
        const other = await checked(token);
        expect(other).toContain('shop-team');
        expect(other).not.toContain(SHOP_MESSAGE);
        expect(other).not.toContain('"detailLevel":"full"');
      }
    },
  );

  it('answers the HTTP route the same for the same token', async () => {
    const response = await fetch(`http://127.0.0.1:${controller.port}/resources/reports/shop`, {
      headers: { authorization: `Bearer ${tokens.alice}` },
    });
    const report = (await response.json()) as Report;
    expect(report.constraints.find((entry) => entry.name.startsWith('shop-team'))?.detailLevel).toBe('full');
    // The reviews it cost are counted where operators look.
    const metrics = await (await fetch(`http://127.0.0.1:${controller.port}/metrics`)).text();
    const sent = (kind: string) =>
      Number(
        new RegExp(`^forewarn_caller_reviews_total\\{kind="${kind}"\\} (\\d+)$`, 'm').exec(metrics)?.[1],
      );
    expect(sent('TokenReview')).toBeGreaterThanOrEqual(2);
    expect(sent('SubjectAccessReview')).toBe(apiServer.access.reviews.length);
  });
});
