import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import express, { type ErrorRequestHandler, type RequestHandler, type Response } from 'express';
import type { Logger } from '../../logging/logger';
import { answerClientErrorsAsJson } from '../../net/client-error';
import { attachViewerLevel, type RequestLevel } from './viewer-level';
import type { CallerReadAccess } from '../http/caller-read-access';
import {
  admitSession,
  clientKeyOf,
  DEFAULT_SESSION_LIMITS,
  idleSessions,
  type SessionLimits,
} from './session-registry';

// The MCP port (DESIGN.md 2, 5): the legacy SSE transport (GET /sse + POST /messages, what health
// reports as `transport: "sse"`) and Streamable HTTP (/mcp, stateful sessions) side by side, so
// older and newer agents both connect. Each session gets its own McpServer over the shared index.
// Sessions are bounded in number, per client and in idle time (session-registry.ts) so a misbehaving
// client cannot pile them up or crowd out other agents.

export type McpTransportKind = 'sse' | 'streamable-http';

export interface McpHttpServerOptions {
  createServer: () => McpServer;
  logger: Logger;
  /** Sessions over both transports, per client, idle time; default DEFAULT_SESSION_LIMITS. */
  sessionLimits?: Partial<SessionLimits>;
  /** Comment frames on SSE streams so proxies and `kubectl port-forward` keep them open. */
  sseKeepAliveMs?: number;
  /**
   * The level each request is answered at, decided as the HTTP API decides it (viewer-level.ts);
   * absent (`--api-auth=none`), every request reads `full`, as on the HTTP API.
   */
  levelFor?: RequestLevel;
  /**
   * Follows each caller's own RBAC (issue 24, http/caller-read-access.ts) for the request's bearer
   * token, as the HTTP API's `/resources` routes do; absent, the controller's level for everyone.
   */
  callerReadAccess?: CallerReadAccess;
  /** Told of every request that arrives (the controller samples its event-loop delay while it works). */
  onRequest?: () => void;
}

interface Session {
  kind: McpTransportKind;
  /** Who opened it (session-registry.ts `clientKeyOf`). */
  client: string;
  transport: SSEServerTransport | StreamableHTTPServerTransport;
  server: McpServer;
  lastActivity: number;
}

const BODY_LIMIT = '2mb';
const SESSION_HEADER = 'mcp-session-id';

function jsonRpcError(response: Response, status: number, message: string, code = -32000): void {
  if (response.headersSent) return;
  response.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * Browsers send an Origin; agents do not. A page on another site reaching a port-forwarded
 * localhost:8090 (DNS rebinding) carries its own origin and is refused; local tools are allowed.
 */
export function isAllowedOrigin(origin: string | undefined): boolean {
  if (origin === undefined) return true;
  try {
    const host = new URL(origin).hostname;
    return host === 'localhost' || host === '127.0.0.1' || host === '[::1]';
  } catch {
    return false;
  }
}

export class McpHttpServer {
  private readonly sessions = new Map<string, Session>();
  private readonly httpServer: Server;
  private sweeper?: NodeJS.Timeout;
  private readonly limits: SessionLimits;

  constructor(private readonly options: McpHttpServerOptions) {
    this.limits = { ...DEFAULT_SESSION_LIMITS, ...options.sessionLimits };
    this.httpServer = createServer(this.createApp());
    if (options.onRequest) this.httpServer.on('request', options.onRequest);
    answerClientErrorsAsJson(this.httpServer);
  }

  /** Sessions open right now, by transport (for metrics). */
  sessionCounts(): Record<McpTransportKind, number> {
    const counts: Record<McpTransportKind, number> = { sse: 0, 'streamable-http': 0 };
    for (const session of this.sessions.values()) counts[session.kind]++;
    return counts;
  }

  async listen(port: number, address: string): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.httpServer.once('error', reject);
      this.httpServer.listen(port, address, () => {
        this.httpServer.off('error', reject);
        resolve();
      });
    });
    this.sweeper = setInterval(() => this.closeIdleSessions(), Math.min(this.limits.idleMs, 60_000));
    this.sweeper.unref();
    const bound = this.httpServer.address();
    return typeof bound === 'object' && bound ? bound.port : port;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.allSettled([...this.sessions.values()].map((session) => session.transport.close()));
    this.sessions.clear();
    if (!this.httpServer.listening) return;
    const closed = new Promise<void>((resolve) => this.httpServer.close(() => resolve()));
    // SSE streams never end by themselves.
    this.httpServer.closeAllConnections();
    await closed;
  }

  /** Closes idle sessions, SSE streams included (their keep-alive comments are not activity). */
  closeIdleSessions(now = Date.now()): void {
    for (const id of idleSessions(this.sessions, now, this.limits.idleMs)) this.closeSession(id, 'idle');
  }

  private closeSession(id: string, why: 'idle' | 'replaced' | 'evicted'): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.options.logger.info({ session: id, transport: session.kind, why }, 'closing MCP session');
    this.forget(id);
    void session.transport.close().catch(() => undefined);
  }

  /** Makes room for one more session of the request's client, or answers 503. */
  private hasRoom(request: IncomingMessage, response: Response): string | undefined {
    const client = clientKeyOf(request);
    const admission = admitSession(this.sessions, client, Date.now(), this.limits);
    if (!admission.admit) {
      jsonRpcError(
        response,
        503,
        `too many MCP sessions in use (${this.limits.maxSessions}); retry in a minute`,
      );
      return undefined;
    }
    for (const id of admission.close)
      this.closeSession(id, this.sessions.get(id)?.client === client ? 'replaced' : 'evicted');
    return client;
  }

  private register(id: string, session: Session): void {
    this.sessions.set(id, session);
    this.options.logger.debug({ session: id, transport: session.kind }, 'MCP session opened');
  }

  private forget(id: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    void session.server.close().catch(() => undefined);
    this.options.logger.debug({ session: id, transport: session.kind }, 'MCP session closed');
  }

  /** Decides the caller's level for every request that can carry a tool call or a resource read. */
  private decideViewerLevel: RequestHandler = (request, _response, next) => {
    const decide =
      this.options.levelFor ?? ((_incoming: IncomingMessage) => Promise.resolve('full' as const));
    const access = this.options.callerReadAccess;
    decide(request)
      .then((level) => {
        attachViewerLevel(
          request,
          level,
          access ? (constraints) => access.readableConstraints(request, constraints) : undefined,
        );
        next();
      })
      .catch(next);
  };

  private openSseSession: RequestHandler = async (request, response) => {
    const client = this.hasRoom(request, response);
    if (client === undefined) return;
    const transport = new SSEServerTransport('/messages', response);
    const server = this.options.createServer();
    transport.onclose = () => this.forget(transport.sessionId);
    this.register(transport.sessionId, {
      kind: 'sse',
      client,
      transport,
      server,
      lastActivity: Date.now(),
    });
    await server.connect(transport);
    keepAlive(response, this.options.sseKeepAliveMs ?? 15_000);
  };

  private postSseMessage: RequestHandler = async (request, response) => {
    const id = typeof request.query.sessionId === 'string' ? request.query.sessionId : '';
    const session = this.sessions.get(id);
    if (!session || !(session.transport instanceof SSEServerTransport))
      return jsonRpcError(response, 404, 'unknown or closed SSE session; open a new one with GET /sse');
    session.lastActivity = Date.now();
    await session.transport.handlePostMessage(request, response, request.body);
  };

  private handleStreamableHttp: RequestHandler = async (request, response) => {
    const id = request.get(SESSION_HEADER);
    if (id !== undefined) {
      const session = this.sessions.get(id);
      if (!session || !(session.transport instanceof StreamableHTTPServerTransport))
        return jsonRpcError(response, 404, 'unknown or expired MCP session; initialize a new one', -32001);
      session.lastActivity = Date.now();
      return session.transport.handleRequest(request, response, request.body);
    }
    if (request.method !== 'POST' || !isInitializeRequest(request.body))
      return jsonRpcError(
        response,
        400,
        `missing ${SESSION_HEADER} header; start with an initialize request`,
      );
    const client = this.hasRoom(request, response);
    if (client === undefined) return;
    const server = this.options.createServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId: string): void =>
        this.register(sessionId, {
          kind: 'streamable-http',
          client,
          transport,
          server,
          lastActivity: Date.now(),
        }),
    });
    transport.onclose = () => {
      if (transport.sessionId) this.forget(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(request, response, request.body);
  };

  private createApp(): express.Express {
    const app = express();
    app.disable('x-powered-by');
    app.use((request, response, next) => {
      if (isAllowedOrigin(request.get('origin'))) return next();
      jsonRpcError(response, 403, 'cross-origin requests are not allowed on the MCP port');
    });
    const json = express.json({ limit: BODY_LIMIT });
    app.get('/sse', this.openSseSession);
    const level = this.decideViewerLevel;
    app.post('/messages', json, level, this.postSseMessage);
    app.post('/mcp', json, level, this.handleStreamableHttp);
    app.get('/mcp', level, this.handleStreamableHttp);
    app.delete('/mcp', level, this.handleStreamableHttp);
    app.use((request, response) =>
      jsonRpcError(response, 404, `no MCP endpoint ${request.method} ${request.path}; use /mcp or /sse`),
    );
    const handleError: ErrorRequestHandler = (failure: unknown, _request, response, _next) => {
      const status =
        typeof failure === 'object' && failure !== null && 'status' in failure ? Number(failure.status) : 500;
      if (status >= 400 && status < 500)
        return jsonRpcError(response, status, 'the request body could not be read as JSON', -32700);
      this.options.logger.error({ err: failure }, 'MCP request failed; this is a bug, please report it');
      jsonRpcError(response, 500, 'internal error; see the controller log', -32603);
    };
    app.use(handleError);
    return app;
  }
}

function keepAlive(response: ServerResponse, intervalMs: number): void {
  if (intervalMs <= 0) return;
  const timer = setInterval(() => {
    if (!response.writableEnded) response.write(': keep-alive\n\n');
  }, intervalMs);
  timer.unref();
  response.once('close', () => clearInterval(timer));
}
