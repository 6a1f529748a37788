import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpHttpServer } from '../../services/controller/mcp/http-server';
import { silentLogger } from '../../services/logging/logger';
import { initialize } from './support/mcp-wire';

// Issue 32, row 9: 100 `initialize` POSTs in 0.9 s, or 100 held `GET /sse`, took the MCP port's 100
// sessions and every other agent got 503 for 30 minutes. Now a client (its token, or its address)
// holds at most 16 sessions and replaces its own oldest; idle sessions, SSE included, are closed.

jest.setTimeout(60_000);

const servers: McpHttpServer[] = [];
const agents: http.Agent[] = [];
afterAll(async () => {
  for (const agent of agents) agent.destroy();
  await Promise.all(servers.map((server) => server.close()));
});

async function serve(
  sessionLimits: Record<string, number> = {},
): Promise<{ server: McpHttpServer; base: string }> {
  const server = new McpHttpServer({
    createServer: () => new McpServer({ name: 'test', version: '1' }),
    logger: silentLogger(),
    sessionLimits,
  });
  servers.push(server);
  const port = await server.listen(0, '127.0.0.1');
  return { server, base: `http://127.0.0.1:${port}` };
}

/** Opens a held `GET /sse` (as the flood does) and resolves once its headers arrived. */
function holdSse(base: string, agent: http.Agent): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    http.get(`${base}/sse`, { agent }, resolve).on('error', reject);
  });
}

const agentToken = (name: string) => ({ authorization: `Bearer agent-${name}` });

it('100 initialize POSTs of one client: another agent still initializes, and one already in keeps its session', async () => {
  const { server, base } = await serve();
  const url = `${base}/mcp`;
  const before = await initialize(url, agentToken('early'));
  expect(before.status).toBe(200);
  const statuses: number[] = [];
  for (let serial = 0; serial < 100; serial++) statuses.push((await initialize(url)).status);
  expect(statuses.every((status) => status === 200)).toBe(true);
  expect(server.sessionCounts()['streamable-http']).toBeLessThanOrEqual(1 + 16);
  expect((await initialize(url, agentToken('late'))).status).toBe(200);
  // The early agent's session survived the flood.
  const ping = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': before.session?.id ?? '',
      ...agentToken('early'),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'ping' }),
  });
  await ping.arrayBuffer();
  expect(ping.status).toBe(200);
});

it('100 held GET /sse of one client: another agent still gets a session', async () => {
  const { server, base } = await serve();
  const agent = new http.Agent({ keepAlive: false, maxSockets: 200 });
  agents.push(agent);
  const streams = await Promise.all(Array.from({ length: 100 }, () => holdSse(base, agent)));
  expect(streams.filter((stream) => stream.statusCode === 200).length).toBe(100);
  expect(server.sessionCounts().sse).toBeLessThanOrEqual(16);
  expect((await initialize(`${base}/mcp`, agentToken('other'))).status).toBe(200);
  for (const stream of streams) stream.destroy();
});

it('an idle SSE session is closed, though the server writes keep-alives on it', async () => {
  const { server, base } = await serve({ idleMs: 300 });
  const agent = new http.Agent({ keepAlive: false });
  agents.push(agent);
  const stream = await holdSse(base, agent);
  expect(server.sessionCounts().sse).toBe(1);
  const ended = new Promise<void>((resolve) => stream.on('end', resolve).resume());
  server.closeIdleSessions(Date.now() + 1_000);
  await ended;
  expect(server.sessionCounts().sse).toBe(0);
});
