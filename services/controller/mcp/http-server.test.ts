import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpHttpServer } from './http-server';
import { silentLogger } from '../../logging/logger';

// The controller samples its event-loop delay only while it works (services/logging/
// event-loop-delay.ts): a question on the MCP port is work, as a request on the HTTP API is.

let server: McpHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

it('tells onRequest of every request on the MCP port, refused ones included', async () => {
  let requests = 0;
  server = new McpHttpServer({
    createServer: () => new McpServer({ name: 'test', version: '1' }),
    logger: silentLogger(),
    onRequest: () => (requests += 1),
  });
  const base = `http://127.0.0.1:${await server.listen(0, '127.0.0.1')}`;
  const initialize = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
    }),
  });
  await initialize.arrayBuffer();
  expect(initialize.status).toBe(200);
  expect(requests).toBe(1);
  const unknown = await fetch(`${base}/nowhere`);
  await unknown.arrayBuffer();
  expect(unknown.status).toBe(404);
  expect(requests).toBe(2);
});
