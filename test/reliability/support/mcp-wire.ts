// Raw MCP over Streamable HTTP, as a hostile client sends it: an initialize, then any JSON-RPC body
// (a batch included). Answers come as an SSE stream or as JSON; both are read here.

export const MCP_ACCEPT = 'application/json, text/event-stream';

export interface McpSession {
  url: string;
  id: string;
}

/** The JSON-RPC messages of an answer, whichever way the server framed it. */
export async function jsonRpcMessages(response: Response): Promise<Array<Record<string, unknown>>> {
  const text = await response.text();
  if ((response.headers.get('content-type') ?? '').includes('text/event-stream'))
    return text
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice(5)) as Record<string, unknown>);
  const parsed = JSON.parse(text) as Record<string, unknown> | Array<Record<string, unknown>>;
  return Array.isArray(parsed) ? parsed : [parsed];
}

export function initializeBody(id: number | string = 0): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
  };
}

/** Sends initialize; returns the status and, when one was opened, the session. */
export async function initialize(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; session?: McpSession }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: MCP_ACCEPT, ...headers },
    body: JSON.stringify(initializeBody()),
  });
  await response.arrayBuffer();
  const id = response.headers.get('mcp-session-id');
  if (response.status !== 200 || id === null) return { status: response.status };
  const session = { url, id };
  await post(session, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  return { status: response.status, session };
}

export function post(
  session: McpSession,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(session.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: MCP_ACCEPT,
      'mcp-session-id': session.id,
      'mcp-protocol-version': '2025-03-26',
      ...headers,
    },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

export function toolCall(id: number, name: string, args: Record<string, unknown>): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

/** The JSON a tool call answered with (its single text content). */
export function toolResultJson<T>(message: Record<string, unknown>): T {
  const result = message.result as { content?: Array<{ type: string; text: string }>; isError?: boolean };
  const first = result?.content?.[0];
  if (!first || first.type !== 'text') throw new Error(`no text content: ${JSON.stringify(message)}`);
  return JSON.parse(first.text) as T;
}
