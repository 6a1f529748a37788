import { createServer, type Server } from 'node:https';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { X509Certificate } from 'node:crypto';
import { createSecureContext, type TLSSocket } from 'node:tls';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from '../logging/logger';
import { buildWarnings } from '../model/warnings';
import {
  ADMISSION_V1,
  buildAdmissionResponse,
  constraintQueryOf,
  parseAdmissionReviewText,
  uidFromReviewPrefix,
  type AdmissionRequestSummary,
} from './admission';
import type { ConstraintSource } from './controller-client';
import { pairIdentity, type ServingPair } from './certs/certificate-check';
import { readRequestBody } from './request-body';
import { admissionOutcome, type AdmissionFacts, type WebhookMetrics } from './metrics';
import { answerClientErrorsAsJson } from '../net/client-error';
import { DEFAULT_DRAIN_MS, drainHttpServer } from '../net/drain-http-server';
import { errorMessage } from '../model/error-message';

// The webhook's HTTP edge (spec 4.3). Rule B-1 is enforced here structurally: the admission handler
// is the fallback for every request that is not a probe, it has no branch that sets `allowed`
// to anything but true, and both its own catch and the listener's last net answer with an allowed
// AdmissionReview (HTTP 200), whatever failed.

export interface WebhookAppOptions {
  constraints: ConstraintSource;
  logger: Logger;
  /** Readiness: true once a serving certificate is loaded. */
  isReady: () => boolean;
  /** Reviews larger than this are answered without warnings. */
  maxReviewBytes?: number;
  /** Prometheus metrics; `GET /metrics` is served when set. */
  metrics?: WebhookMetrics;
  /**
   * Who is the API server (api-server-identity.ts): reviews from any other caller are answered from
   * `anonymousConstraints` (the controller asked without the webhook's token). Absent: every caller
   * gets `constraints` (tests, `--trust-unauthenticated-reviews`).
   */
  callerTrust?: {
    isApiServer: (request: IncomingMessage) => boolean;
    anonymousConstraints: ConstraintSource;
  };
}

// An UPDATE review carries the object twice (object and oldObject) and etcd accepts objects up to
// 1.5 MiB: 4 MiB admits every review the API server can send, and still bounds memory per request.
export const DEFAULT_MAX_REVIEW_BYTES = 4 * 1024 * 1024;

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'Content-Type': JSON_CONTENT_TYPE,
    'Content-Length': Buffer.byteLength(text),
  });
  response.end(text);
}

function sendAllowed(
  response: ServerResponse,
  uid: string,
  warnings: readonly string[] = [],
  apiVersion = ADMISSION_V1,
): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  sendJson(response, 200, buildAdmissionResponse(uid, warnings, apiVersion));
}

function describeRequest(request: AdmissionRequestSummary): Record<string, unknown> {
  return {
    uid: request.uid,
    namespace: request.namespace,
    name: request.name,
    operation: request.operation,
    kind: request.kind?.kind ?? null,
    resource: request.resource ? `${request.resource.group}/${request.resource.resource}` : null,
  };
}

/** The path without its query, lower-cased and without one trailing slash (as express matched it). */
function routePath(url: string | undefined): string {
  const path = (url ?? '/').split('?', 1)[0].toLowerCase();
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/** Warnings for one parsed review, or the reason there are none; never throws for a failed query. */
async function reviewWarnings(
  options: WebhookAppOptions,
  review: AdmissionRequestSummary,
  fromApiServer: boolean,
): Promise<{ facts: AdmissionFacts; warnings: string[] }> {
  const { logger, metrics } = options;
  const constraints = fromApiServer
    ? options.constraints
    : (options.callerTrust?.anonymousConstraints ?? options.constraints);
  const queryStarted = performance.now();
  const result = await constraints.query(constraintQueryOf(review, 'warnings'));
  metrics?.observeControllerQuery(
    result.ok ? 'ok' : result.reason,
    (performance.now() - queryStarted) / 1000,
  );
  if (!result.ok) {
    logger.warn(
      {
        event: 'controller_query_failed',
        reason: result.reason,
        detail: result.detail,
        ...describeRequest(review),
      },
      'constraint query to the controller failed; request allowed without warnings. Check that the controller is running and that GET <controller-url>/api/v1/health answers from the webhook pod',
    );
    return { facts: { reviewParsed: true, query: result.reason, warnings: 0 }, warnings: [] };
  }
  if (result.skippedEntries > 0) {
    logger.warn(
      { event: 'controller_entries_skipped', skipped: result.skippedEntries, ...describeRequest(review) },
      'controller listed constraints without a known severity or a summary; they were skipped. Check that controller and webhook versions match',
    );
  }
  const warnings = buildWarnings(result.constraints);
  // Guarded: the fields are built on every review otherwise, even with debug off.
  if (logger.isLevelEnabled('debug'))
    logger.debug(
      {
        event: 'admission',
        ...describeRequest(review),
        labels: review.labels,
        constraints: result.constraints.length,
        warnings: warnings.length,
      },
      'admission reviewed',
    );
  return { facts: { reviewParsed: true, query: 'ok', warnings: warnings.length }, warnings };
}

/**
 * Every request that is not a probe is an admission request: a registration pointing at `/` or
 * `/validate/` still gets warnings, and nothing answers 404 to the API server. Rule B-1: every
 * branch, the catch included, answers an allowed AdmissionReview (HTTP 200).
 */
function admissionHandler(options: WebhookAppOptions) {
  const { logger, metrics } = options;
  const maxReviewBytes = options.maxReviewBytes ?? DEFAULT_MAX_REVIEW_BYTES;
  return async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const started = performance.now();
    // What the catch below can still echo, as far as the request got.
    let uid = '';
    let reviewApiVersion = ADMISSION_V1;
    const answer = (facts: AdmissionFacts, warnings: string[] = []) => {
      metrics?.observeAdmission(admissionOutcome(facts), (performance.now() - started) / 1000);
      metrics?.countWarnings(warnings);
      sendAllowed(response, uid, warnings, reviewApiVersion);
    };
    try {
      const body = await readRequestBody(request, maxReviewBytes);
      if (body.kind === 'oversized') {
        uid = uidFromReviewPrefix(body.prefix);
        logger.warn(
          { event: 'review_too_large', uid, bytes: body.receivedBytes, limitBytes: maxReviewBytes },
          'admission review larger than the limit; allowed without warnings. Raise the limit if objects this large are expected',
        );
        return answer({ reviewParsed: false, warnings: 0 });
      }
      const parsed = parseAdmissionReviewText(body.text);
      if (!parsed.ok) {
        uid = parsed.uid;
        logger.warn(
          {
            event: 'review_invalid',
            uid,
            problem: parsed.problem,
            path: (request.url ?? '/').split('?', 1)[0],
            contentType: request.headers['content-type'] ?? null,
          },
          'admission request is not a usable AdmissionReview; allowed without warnings. Check the webhook registration (admissionReviewVersions v1, path /validate)',
        );
        reviewApiVersion = parsed.reviewApiVersion;
        return answer({ reviewParsed: false, warnings: 0 });
      }
      uid = parsed.request.uid;
      reviewApiVersion = parsed.request.reviewApiVersion;
      const fromApiServer = options.callerTrust?.isApiServer(request) ?? true;
      const reviewed = await reviewWarnings(options, parsed.request, fromApiServer);
      answer(reviewed.facts, reviewed.warnings);
    } catch (error) {
      logger.warn(
        { event: 'admission_failed', uid, error: errorMessage(error) },
        'unexpected error while reviewing an admission request; allowed without warnings. Please report this with the log line',
      );
      answer({ reviewParsed: false, warnings: 0 });
    }
  };
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
