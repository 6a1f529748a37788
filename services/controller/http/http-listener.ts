import { createServer, type RequestListener, type Server } from 'node:http';
import type { Logger } from '../../logging/logger';
import { answerClientErrorsAsJson } from '../../net/client-error';
import { drainHttpServer } from '../../net/drain-http-server';

// The controller's HTTP API socket: listening, and the drain when the controller stops
// (services/net/drain-http-server.ts).

function listen(server: Server, port: number, address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => {
      server.off('error', reject);
      const bound = server.address();
      resolve(typeof bound === 'object' && bound ? bound.port : port);
    });
  });
}

export interface ListeningHttpServer {
  httpServer: Server;
  port: number;
  /** Stops accepting and lets answers in flight finish; connections close as they turn idle. */
  drain(): Promise<void>;
}

export async function startHttpServer(
  listenOn: { port: number; address: string },
  logger: Logger,
  app: RequestListener,
): Promise<ListeningHttpServer> {
  const httpServer = createServer((request, response) => {
    // While draining, ask the webhook to reconnect (to another replica) instead of reusing this connection.
    if (!httpServer.listening) response.setHeader('Connection', 'close');
    app(request, response);
  });
  httpServer.keepAliveTimeout = 65_000;
  answerClientErrorsAsJson(httpServer);
  const port = await listen(httpServer, listenOn.port, listenOn.address);
  logger.info({ port, address: listenOn.address }, 'HTTP API listening');
  return { httpServer, port, drain: () => drainHttpServer(httpServer) };
}
