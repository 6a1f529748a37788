import { connect, type Socket } from 'node:net';
import { generateSelfSignedBundle, type CertificateBundle } from '../../services/webhook/certs/self-signed';
import { createWebhookApp, WebhookHttpsServer } from '../../services/webhook/server';
import { silentLogger } from '../../services/logging/logger';
import type { ConstraintSource } from '../../services/webhook/controller-client';
import { admissionReview, tlsRequest } from '../integration/webhook/harness';

// Issue 27: 300 clients that send 3 bytes and leave were held in CLOSE-WAIT for 14 minutes and more
// (the `clientError` listener answered a failed handshake with `socket.end`, which never completes
// on a socket that has no TLS session, and Node destroys the socket only when no listener exists),
// and SIGTERM no longer exited cleanly. Every socket that does not finish its TLS handshake in time,
// or errs, is closed by the webhook; a normal review is still answered; close() leaves none behind.

const HANDSHAKE_MS = 400;
const SOCKETS_PER_KIND = 40;

const noConstraints: ConstraintSource = {
  query: () => Promise.resolve({ ok: true, constraints: [], skippedEntries: 0 }),
};

let bundle: CertificateBundle;

beforeAll(async () => {
  bundle = await generateSelfSignedBundle({
    serviceName: 'forewarn-webhook',
    namespace: 'forewarn-system',
    extraSans: ['127.0.0.1'],
    now: new Date(),
  });
});

async function startServer(): Promise<{ server: WebhookHttpsServer; port: number }> {
  const server: WebhookHttpsServer = new WebhookHttpsServer(
    (request, response) => app(request, response),
    silentLogger(),
    { handshakeMs: HANDSHAKE_MS },
  );
  const app = createWebhookApp({
    constraints: noConstraints,
    logger: silentLogger(),
    isReady: () => server.hasCertificate(),
  });
  server.setCertificate(bundle);
  const port = await server.listen({ host: '127.0.0.1', port: 0 });
  return { server, port };
}

type Behaviour =
  | 'three bytes of a TLS record, then leave'
  | 'three bytes of a TLS record, then silence'
  | 'three bytes of garbage, then leave'
  | 'nothing at all';

const BEHAVIOURS: Behaviour[] = [
  'three bytes of a TLS record, then leave',
  'three bytes of a TLS record, then silence',
  'three bytes of garbage, then leave',
  'nothing at all',
];

interface RawClient {
  socket: Socket;
  /** Resolves (with the milliseconds it took) when the server has closed its side. */
  closed: Promise<number>;
}

function rawClient(port: number, behaviour: Behaviour): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    // allowHalfOpen: the client never closes its own side first, so `end` is the server's FIN.
    const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true }, () => {
      const header = Buffer.from([0x16, 0x03, 0x01]);
      if (behaviour === 'three bytes of a TLS record, then leave') socket.end(header);
      if (behaviour === 'three bytes of a TLS record, then silence') socket.write(header);
      if (behaviour === 'three bytes of garbage, then leave') socket.end('abc');
      resolve({ socket, closed });
    });
    const closed = new Promise<number>((resolveClosed) => {
      socket.once('end', () => resolveClosed(performance.now() - started));
      socket.once('close', () => resolveClosed(performance.now() - started));
    });
    socket.on('error', () => undefined);
    socket.once('error', reject);
  });
}

function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timed out'> {
  return Promise.race([
    promise,
    new Promise<'timed out'>((resolve) => setTimeout(() => resolve('timed out'), ms)),
  ]);
}

describe('the webhook closes connections that never complete a TLS handshake', () => {
  it.each(BEHAVIOURS)(
    'closes clients that send %s within the handshake timeout, and still answers reviews',
    async (behaviour) => {
      const { server, port } = await startServer();
      const clients = await Promise.all(
        Array.from({ length: SOCKETS_PER_KIND }, () => rawClient(port, behaviour)),
      );
      try {
        const closedAfter = await within(
          Promise.all(clients.map((client) => client.closed)),
          HANDSHAKE_MS * 8,
        );
        expect(closedAfter).not.toBe('timed out');
        const review = await tlsRequest({
          port,
          ca: bundle.caPem,
          body: admissionReview(
            {
              group: '',
              version: 'v1',
              kind: 'Pod',
              resource: 'pods',
              object: { metadata: { name: 'web' } },
            },
            'CREATE',
            'uid-after-the-flood',
          ),
        });
        expect(review.status).toBe(200);
        expect(JSON.parse(review.text)).toMatchObject({
          response: { uid: 'uid-after-the-flood', allowed: true },
        });
      } finally {
        for (const client of clients) client.socket.destroy();
        await server.close(500);
      }
    },
  );

  it('closes within its drain time while clients hold sockets mid-handshake, leaving none open (SIGTERM)', async () => {
    const { server, port } = await startServer();
    const clients = await Promise.all(
      Array.from({ length: SOCKETS_PER_KIND }, (_, at) =>
        rawClient(port, BEHAVIOURS[at % BEHAVIOURS.length] as Behaviour),
      ),
    );
    const started = performance.now();
    const closing = server.close(200);
    // Well before the handshake timeout would close them: close() itself must.
    const outcome = await within(
      Promise.all([closing, ...clients.map((client) => client.closed)]),
      HANDSHAKE_MS,
    );
    for (const client of clients) client.socket.destroy();
    await closing;
    expect(outcome).not.toBe('timed out');
    expect(performance.now() - started).toBeLessThan(HANDSHAKE_MS);
  });
});
