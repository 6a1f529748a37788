import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { stringify } from 'yaml';
import { parseControllerConfig } from '../../../services/controller/config';
import { startController, type RunningController } from '../../../services/controller/runtime';
import { ManifestFileSource } from '../../../services/controller/sources/manifest-files';
import { kubernetesTokenReviewer } from '../../../services/controller/http/token-review';
import type { ManifestCheckReport } from '../../../services/controller/check/manifest-check';
import type { AdmissionCheck } from '../../../services/model/api';
import { buildWarnings } from '../../../services/model/warnings';
import { silentLogger } from '../../../services/logging/logger';
import { KubernetesApiTestServer } from '../../support/kubernetes-api-server';
import {
  SECRET_FIELD_NAME,
  SECRET_PARAM_DEPLOYMENT,
  SECRET_PARAM_OBJECTS,
  SECRET_PARAM_VALUE,
  SECRET_POLICY_NAME,
} from '../../support/secret-param-policy';
import { toolJson, type TransportName } from './mcp-support';

// Issue 27: with `--api-auth tokenreview --detail-level summary`, the MCP `check` tool answered an
// unauthenticated client with the policy's names, its CEL and a param value that
// `POST /api/v1/admission-check` redacts for the same caller. Both now decide the level by the same
// rule, per request: the webhook's TokenReview-checked token reads `full`, everyone else `summary`.

const WEBHOOK = { namespace: 'forewarn-system', serviceAccount: 'forewarn-webhook' };
const TRANSPORTS: TransportName[] = ['sse', 'streamable-http'];

describe('MCP check honours --api-auth like POST /api/v1/admission-check', () => {
  const apiServer = new KubernetesApiTestServer();
  let directory: string;
  let controller: RunningController;
  let webhookToken: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    await apiServer.start();
    webhookToken = apiServer.tokens.issue({ ...WEBHOOK, audiences: ['forewarn-controller'] });
    directory = await mkdtemp(path.join(os.tmpdir(), 'forewarn-mcp-auth-'));
    await writeFile(
      path.join(directory, 'policies.yaml'),
      SECRET_PARAM_OBJECTS.map((object) => stringify(object)).join('---\n'),
    );
    // A cluster controller (tokenreview needs one) whose objects come from files, and whose
    // TokenReviews go to the protocol-faithful test API server.
    const config = parseControllerConfig(
      [
        ...['--address', '127.0.0.1', '--port', '0', '--mcp-port', '0'],
        ...['--api-auth', 'tokenreview', '--detail-level', 'summary'],
        ...['--webhook-service-account', `${WEBHOOK.namespace}/${WEBHOOK.serviceAccount}`],
      ],
      {},
    );
    controller = await startController(config, silentLogger(), {
      source: (sink, registry) =>
        new ManifestFileSource({ directory, sink, registry, logger: silentLogger() }),
      reviewToken: kubernetesTokenReviewer(apiServer.kubeConfig()),
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

  async function httpCheck(token?: string): Promise<AdmissionCheck> {
    const response = await fetch(`http://127.0.0.1:${controller.port}/api/v1/admission-check`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify({ operation: 'CREATE', object: SECRET_PARAM_DEPLOYMENT }),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as AdmissionCheck;
  }

  async function mcpCheck(client: Client): Promise<{ text: string; report: ManifestCheckReport }> {
    const result = (await client.callTool({
      name: 'check',
      arguments: { manifest: stringify(SECRET_PARAM_DEPLOYMENT) },
    })) as CallToolResult;
    const report = toolJson<ManifestCheckReport>(result);
    return { text: JSON.stringify(result), report };
  }

  // The field the policy's CEL reads and the object lacks must not show in an evidence path either.
  // The policy's name is no secret to this caller: the API server prints it with every rejection
  // (the one naming rule, issue 31), so it is shown; what the policy reads and holds is not.
  const secrets = [SECRET_PARAM_VALUE, 'startsWith', 'params.spec', SECRET_FIELD_NAME];

  it.each(TRANSPORTS)(
    'over %s, answers a caller without a token as HTTP does: nothing secret',
    async (transport) => {
      const http = await httpCheck();
      for (const secret of secrets) expect(JSON.stringify(http)).not.toContain(secret);
      const { text, report } = await mcpCheck(await connect(transport));
      for (const secret of secrets) expect(text).not.toContain(secret);
      const [deployment] = report.objects;
      expect(deployment?.warnings).toEqual(buildWarnings(http.constraints));
      expect(deployment?.findings.map((finding) => finding.evidence)).toEqual(
        http.constraints.filter((entry) => entry.verdict === 'violates').map((entry) => entry.evidence),
      );
    },
  );

  it.each(TRANSPORTS)("over %s, answers the webhook's token in full, as HTTP does", async (transport) => {
    const http = await httpCheck(webhookToken);
    expect(JSON.stringify(http)).toContain(SECRET_PARAM_VALUE);
    const { text, report } = await mcpCheck(await connect(transport, webhookToken));
    expect(text).toContain(SECRET_PARAM_VALUE);
    expect(report.objects[0]?.warnings).toEqual(buildWarnings(http.constraints));
    expect(report.objects[0]?.findings[0]?.name).toBe(`${SECRET_POLICY_NAME}-binding`);
  });

  it.each(TRANSPORTS)("over %s, answers a token that is not the webhook's redacted", async (transport) => {
    const other = apiServer.tokens.issue({
      namespace: 'shop',
      serviceAccount: 'default',
      audiences: ['forewarn-controller'],
    });
    const { text } = await mcpCheck(await connect(transport, other));
    expect(text).not.toContain(SECRET_PARAM_VALUE);
    expect(text).toContain(`${SECRET_POLICY_NAME}-binding`);
  });
});
