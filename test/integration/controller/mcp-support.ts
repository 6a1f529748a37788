import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { parseControllerConfig } from '../../../services/controller/config';
import { startController, type RunningController } from '../../../services/controller/runtime';
import { silentLogger } from '../../../services/logging/logger';
import { FIXED_NOW } from '../../support/controller-fixtures';

// A real controller on the demo cluster with MCP on ephemeral ports, and SDK clients for it.

export const DEMO_MANIFESTS = path.join(__dirname, '../../../examples/manifests');

export type TransportName = 'sse' | 'streamable-http';

export async function startDemoController(detailLevel = 'summary'): Promise<RunningController> {
  const config = parseControllerConfig(
    [
      '--manifests',
      DEMO_MANIFESTS,
      '--address',
      '127.0.0.1',
      '--port',
      '0',
      '--mcp-port',
      '0',
      '--detail-level',
      detailLevel,
    ],
    {},
  );
  // A fixed clock makes `generatedAt` equal over HTTP and MCP, so whole bodies can be compared.
  return startController(config, silentLogger(), { clock: () => FIXED_NOW });
}

export async function connectClient(
  controller: RunningController,
  transport: TransportName,
): Promise<Client> {
  const port = controller.mcp?.port;
  if (port === undefined) throw new Error('the controller runs without MCP');
  const client = new Client({ name: 'forewarn-test', version: '1.0.0' });
  await client.connect(
    transport === 'sse'
      ? new SSEClientTransport(new URL(`http://127.0.0.1:${port}/sse`))
      : new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)),
  );
  return client;
}

export async function httpText(controller: RunningController, pathname: string): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${controller.port}${pathname}`);
  return response.text();
}

/** The JSON a tool returned as its (single) text content. */
export function toolJson<T>(result: CallToolResult): T {
  const [first] = result.content;
  if (result.isError || first?.type !== 'text')
    throw new Error(`tool failed: ${JSON.stringify(result.content)}`);
  return JSON.parse(first.text) as T;
}

export function toolText(result: CallToolResult): string {
  const [first] = result.content;
  return first?.type === 'text' ? first.text : '';
}

/** The text of a resource with one text content. */
export async function readResourceText(client: Client, uri: string): Promise<string> {
  const { contents } = await client.readResource({ uri });
  const [first] = contents;
  if (contents.length !== 1 || !('text' in first)) throw new Error(`${uri} did not return one text content`);
  return first.text;
}
