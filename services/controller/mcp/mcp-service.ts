import type { Logger } from '../../logging/logger';
import type { McpState } from '../views/health';
import { McpHttpServer, type McpTransportKind } from './http-server';
import { createForewarnMcpServer, type ForewarnMcpDependencies } from './server';
import { errorMessage } from '../../model/error-message';
import type { RequestLevel } from './viewer-level';
import type { CallerReadAccess } from '../http/caller-read-access';

// Starts the MCP port for the controller and keeps the `mcp` runtime state true to it: `enabled`
// becomes true only once the port listens (so health and capabilities never claim a server that
// is not there) and false again when it closes.

export interface McpServiceOptions {
  address: string;
  port: number;
  dependencies: ForewarnMcpDependencies;
  /** The HTTP API's level rule (http/api-auth.ts), applied per MCP request; absent: `--api-auth=none`. */
  levelFor?: RequestLevel;
  /** Each caller's own RBAC (http/caller-read-access.ts, issue 24); absent: the controller's level. */
  callerReadAccess?: CallerReadAccess;
  /** The object health and capabilities read; updated in place. */
  state: McpState;
  logger: Logger;
  /** Told of every request on the MCP port. */
  onRequest?: () => void;
}

export interface RunningMcpService {
  port: number;
  sessionCounts(): Record<McpTransportKind, number>;
  close(): Promise<void>;
}

export async function startMcpService(options: McpServiceOptions): Promise<RunningMcpService> {
  const server = new McpHttpServer({
    createServer: () => createForewarnMcpServer(options.dependencies),
    logger: options.logger,
    ...(options.levelFor ? { levelFor: options.levelFor } : {}),
    ...(options.callerReadAccess ? { callerReadAccess: options.callerReadAccess } : {}),
    ...(options.onRequest ? { onRequest: options.onRequest } : {}),
  });
  let port: number;
  try {
    port = await server.listen(options.port, options.address);
  } catch (error) {
    throw new Error(
      `cannot serve MCP on ${options.address}:${options.port} (${errorMessage(error)}); choose another --mcp-port or pass --mcp=false`,
    );
  }
  options.state.enabled = true;
  options.state.transport = 'sse';
  options.state.port = port;
  options.logger.info(
    { port, address: options.address, endpoints: ['GET /sse', 'POST /messages', 'POST|GET|DELETE /mcp'] },
    'MCP server listening',
  );
  return {
    port,
    sessionCounts: () => server.sessionCounts(),
    close: async () => {
      options.state.enabled = false;
      await server.close();
    },
  };
}
