import { createServer, type Server } from 'node:https';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { X509Certificate } from 'node:crypto';
import { createSecureContext, type TLSSocket } from 'node:tls';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from '../logging/logger';
import { admissionHandler, sendAllowed, sendJson, type WebhookAppOptions } from './admission-handler';
import { pairIdentity, type ServingPair } from './certs/certificate-check';
import { answerClientErrorsAsJson } from '../net/client-error';
import { DEFAULT_DRAIN_MS, drainHttpServer } from '../net/drain-http-server';
import { errorMessage } from '../model/error-message';

// The webhook's HTTP edge (spec 4.3). Rule B-1 is enforced here structurally: the admission handler
// is the fallback for every request that is not a probe, it has no branch that sets `allowed`
// to anything but true, and both its own catch and the listener's last net answer with an allowed
// AdmissionReview (HTTP 200), whatever failed.

/** The path without its query, lower-cased and without one trailing slash (as express matched it). */
function routePath(url: string | undefined): string {
  const path = (url ?? '/').split('?', 1)[0].toLowerCase();
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/**
 * The webhook's request listener. A plain Node handler rather than an express app: it serves three
 * probes and one admission route, and on the admission path express's per-request work was a
 * measurable share of the CPU per review (docs/benchmarks.md).
 */
export function createWebhookApp(options: WebhookAppOptions): RequestListener {
  const { logger, metrics } = options;
  const admit = admissionHandler(options);
  return (request, response) => {
    const isRead = request.method === 'GET' || request.method === 'HEAD';
    const path = isRead ? routePath(request.url) : '';
    if (path === '/healthz') return sendJson(response, 200, { status: 'ok' });
    if (path === '/readyz') {
      if (options.isReady()) return sendJson(response, 200, { status: 'ready' });
      return sendJson(response, 503, { status: 'not ready', reason: 'no serving certificate loaded yet' });
    }
    if (path === '/metrics' && metrics) {
      metrics.handler(request, response);
      return;
    }
    // Probes and scrapes arrive every few seconds in a cluster: only a review is work whose
    // event-loop delay is worth sampling.
    metrics?.noteActivity();
    // Last net for anything that escaped the handler's own catch.
    admit(request, response).catch((error: unknown) => {
      logger.warn(
        { event: 'admission_failed', error: errorMessage(error) },
        'request failed; answered allowed',
      );
      sendAllowed(response, '');
    });
  };
}

export interface ListenAddress {
  /** Undefined listens on every interface. */
  host: string | undefined;
  port: number;
}

/** How long a connection may take to do nothing useful before the webhook closes it. */
export interface WebhookConnectionTimeouts {
  /**
   * From accept to a completed TLS handshake. The API server completes one in milliseconds; a
   * client that sends a few bytes (or none) and goes quiet is closed after this long instead of
   * Node's 120 s (and, before issue 27, never: see the `tlsClientError` listener).
   */
  handshakeMs: number;
  /** A connection with no traffic at all for this long is closed (past the keep-alive time). */
  idleMs: number;
}

export const DEFAULT_CONNECTION_TIMEOUTS: WebhookConnectionTimeouts = { handshakeMs: 10_000, idleMs: 70_000 };

/**
 * The HTTPS server. It can start without a certificate (handshakes fail and readiness stays false
 * until one is set) and swaps certificates in place with setSecureContext, so a rotation or a
 * rewritten managed certificate never needs a restart.
 */
export class WebhookHttpsServer {
  private readonly server: Server;
  private servedIdentity: string | null = null;
  private servedPair: ServingPair | null = null;
  private readonly certificateListeners: Array<(notAfter: Date) => void> = [];
  private closing = false;
  /** Every accepted TCP connection, TLS handshake done or not (closeAllConnections sees only the done). */
  private readonly sockets = new Set<Socket>();

  constructor(
    handler: RequestListener,
    private readonly logger: Logger,
    timeouts: Partial<WebhookConnectionTimeouts> = {},
    /**
     * The CA of the API server's client certificate (api-server-identity.ts): clients are asked for
     * a certificate and `socket.authorized` says whether theirs chains to it. A client without one
     * is still served (answered as an anonymous caller).
     */
    private readonly clientCaPem?: string,
  ) {
    const { handshakeMs, idleMs } = { ...DEFAULT_CONNECTION_TIMEOUTS, ...timeouts };
    const clientCertificates = clientCaPem
      ? { requestCert: true, rejectUnauthorized: false, ca: clientCaPem }
      : {};
    this.server = createServer(
      { minVersion: 'TLSv1.2', handshakeTimeout: handshakeMs, ...clientCertificates },
      (request: IncomingMessage, response: ServerResponse) => {
        // While draining, ask clients to reconnect elsewhere instead of reusing this connection.
        if (this.closing) response.setHeader('Connection', 'close');
        handler(request, response);
      },
    );
    // The API server keeps webhook connections alive; closing them before it does races with its
    // next request on the same connection, which it would record as a webhook failure.
    this.server.keepAliveTimeout = 65_000;
    answerClientErrorsAsJson(this.server);
    this.server.headersTimeout = 20_000;
    this.server.requestTimeout = 30_000;
    // An established connection that carries nothing for this long is destroyed by Node.
    this.server.timeout = idleMs;
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    // Node's https server hands a failed handshake (a timeout included) to `clientError` and
    // destroys the socket only when nobody listens there; our listener (answerClientErrorsAsJson)
    // cannot answer a socket without a TLS session, so the socket is destroyed here, after it.
    this.server.on('tlsClientError', (error: Error, socket: TLSSocket) => {
      this.logger.debug({ event: 'tls_handshake_failed', error: error.message }, 'TLS handshake failed');
      socket.destroy();
    });
  }

  /** Serves this pair for new connections. Throws (keeping the current pair) if it cannot be used. */
  setCertificate(pair: ServingPair): void {
    // createSecureContext fails on a key that does not match: check before touching the server.
    createSecureContext({ cert: pair.certPem, key: pair.keyPem });
    this.server.setSecureContext({
      cert: pair.certPem,
      key: pair.keyPem,
      minVersion: 'TLSv1.2',
      ...(this.clientCaPem ? { ca: this.clientCaPem } : {}),
    });
    this.servedIdentity = pairIdentity(pair);
    this.servedPair = pair;
    const notAfter = new Date(new X509Certificate(pair.certPem).validTo);
    for (const listener of this.certificateListeners) listener(notAfter);
  }

  /** The pair in service, if any (the start-up warm-up serves it on a listener of its own). */
  servingPair(): ServingPair | null {
    return this.servedPair;
  }

  /** Told the expiry of every certificate put in service (the expiry metric). */
  onCertificateChange(listener: (notAfter: Date) => void): void {
    this.certificateListeners.push(listener);
  }

  hasCertificate(): boolean {
    return this.servedIdentity !== null;
  }

  isServing(pair: ServingPair): boolean {
    return this.servedIdentity === pairIdentity(pair);
  }

  async listen(address: ListenAddress): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(address.port, address.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    return this.port;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Stops accepting, lets in-flight requests finish for up to `drainMs`, then cuts what is left. */
  async close(drainMs: number = DEFAULT_DRAIN_MS): Promise<void> {
    if (!this.server.listening) return;
    this.closing = true;
    await drainHttpServer(this.server, {
      drainMs,
      // Connections still in their TLS handshake are not HTTP connections yet: cut them too.
      cutUntracked: () => {
        for (const socket of this.sockets) socket.destroy();
      },
    });
  }
}
