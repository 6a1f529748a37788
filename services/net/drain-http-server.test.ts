import { createServer, request, Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { drainHttpServer } from './drain-http-server';

// A connection busy when the server starts to close is answered, then closed once idle: the close
// does not wait for the keep-alive timeout (a minute), and what never finishes is cut at the drain time.

function listening(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port }));
  });
}

function get(port: number, agent: Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path: '/', agent }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('drainHttpServer', () => {
  test('answers the request in flight, then closes its keep-alive connection without waiting for the timeout', async () => {
    let answerLater: (() => void) | undefined;
    const { server, port } = await listening((_request, response) => {
      answerLater = () => response.end('late answer');
    });
    const agent = new Agent({ keepAlive: true, keepAliveMsecs: 60_000 });
    try {
      const answer = get(port, agent);
      while (!answerLater) await new Promise((resolve) => setTimeout(resolve, 5));
      let drained = false;
      const draining = drainHttpServer(server, { drainMs: 30_000 }).then(() => (drained = true));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(drained).toBe(false);
      answerLater();
      expect(await answer).toEqual({ status: 200, body: 'late answer' });
      // Well within the 30 s drain and the 60 s keep-alive: closed as soon as it turned idle.
      await draining;
      expect(server.listening).toBe(false);
    } finally {
      agent.destroy();
    }
  });

  test('cuts a request that never finishes at the drain time, and what the server does not track', async () => {
    const { server, port } = await listening(() => undefined);
    const agent = new Agent({ keepAlive: true });
    let untrackedCut = false;
    try {
      const answer = get(port, agent).catch((error: Error) => error);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await drainHttpServer(server, { drainMs: 100, cutUntracked: () => (untrackedCut = true) });
      expect(String(await answer)).toMatch(/socket hang up|ECONNRESET/);
      expect(untrackedCut).toBe(true);
    } finally {
      agent.destroy();
    }
  });

  test('returns at once for a server that is not listening', async () => {
    const server = createServer();
    await expect(drainHttpServer(server)).resolves.toBeUndefined();
  });
});
