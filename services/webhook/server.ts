import { createServer, type Server } from 'node:https';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import type { AddressInfo } from 'node:net';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
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
import { errorMessage } from '../model/error-message';

// The webhook's HTTP edge (spec 4.3). Rule B-1 is enforced here structurally: the admission handler
// is the fallback for every request that is not a probe, it has no branch that sets `allowed`
// to anything but true, and both its own catch and the app's error handler answer with an allowed
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
}

// An UPDATE review carries the object twice (object and oldObject) and etcd accepts objects up to
// 1.5 MiB: 4 MiB admits every review the API server can send, and still bounds memory per request.
export const DEFAULT_MAX_REVIEW_BYTES = 4 * 1024 * 1024;

function sendAllowed(
  response: Response,
  uid: string,
  warnings: readonly string[] = [],
  apiVersion = ADMISSION_V1,
): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  response.status(200).json(buildAdmissionResponse(uid, warnings, apiVersion));
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

// eslint-disable-next-line max-lines-per-function -- wiring in one sequence; splitting it is left from issue 14
export function createWebhookApp(options: WebhookAppOptions): Express {
  const { constraints, logger } = options;
  const maxReviewBytes = options.maxReviewBytes ?? DEFAULT_MAX_REVIEW_BYTES;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.get('/healthz', (_request, response) => {
    response.status(200).json({ status: 'ok' });
  });

  app.get('/readyz', (_request, response) => {
    if (options.isReady()) response.status(200).json({ status: 'ready' });
    else response.status(503).json({ status: 'not ready', reason: 'no serving certificate loaded yet' });
  });

  const metrics = options.metrics;
  if (metrics) app.get('/metrics', metrics.handler);

  // Every other method and path is an admission request: a registration pointing at `/` or
  // `/validate/` still gets warnings, and nothing answers 404 to the API server.
  // eslint-disable-next-line max-lines-per-function -- the verdicts branch reshapes this handler; split after
  app.use(async (request: Request, response: Response) => {
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
        answer({ reviewParsed: false, warnings: 0 });
        return;
      }
      const parsed = parseAdmissionReviewText(body.text);
      if (!parsed.ok) {
        uid = parsed.uid;
        logger.warn(
          {
            event: 'review_invalid',
            uid,
            problem: parsed.problem,
            path: request.path,
            contentType: request.get('content-type') ?? null,
          },
          'admission request is not a usable AdmissionReview; allowed without warnings. Check the webhook registration (admissionReviewVersions v1, path /validate)',
        );
        reviewApiVersion = parsed.reviewApiVersion;
        answer({ reviewParsed: false, warnings: 0 });
        return;
      }
      const review = parsed.request;
      uid = review.uid;
      reviewApiVersion = review.reviewApiVersion;
      const queryStarted = performance.now();
      const result = await constraints.query(constraintQueryOf(review));
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
        answer({ reviewParsed: true, query: result.reason, warnings: 0 });
        return;
      }
      if (result.skippedEntries > 0) {
        logger.warn(
          { event: 'controller_entries_skipped', skipped: result.skippedEntries, ...describeRequest(review) },
          'controller listed constraints without a known severity or a summary; they were skipped. Check that controller and webhook versions match',
        );
      }
      const warnings = buildWarnings(result.constraints);
      logger.debug(
        {
          event: 'admission',
          ...describeRequest(review),
          labels: review.labels,
          constraints: result.constraints.length,
          warnings: warnings.length,
          durationMs: Math.round(performance.now() - started),
        },
        'admission reviewed',
      );
      answer({ reviewParsed: true, query: 'ok', warnings: warnings.length }, warnings);
    } catch (error) {
      logger.warn(
        { event: 'admission_failed', uid, error: errorMessage(error) },
        'unexpected error while reviewing an admission request; allowed without warnings. Please report this with the log line',
      );
      answer({ reviewParsed: false, warnings: 0 });
    }
  });

  // Last net for anything thrown outside the handler above (express internals included).
  app.use((error: Error, _request: Request, response: Response, _next: NextFunction) => {
    logger.warn({ event: 'admission_failed', error: error.message }, 'request failed; answered allowed');
    sendAllowed(response, '');
  });

  return app;
}

export interface ListenAddress {
  /** Undefined listens on every interface. */
  host: string | undefined;
  port: number;
}

export const DEFAULT_DRAIN_MS = 8_000;

/**
 * The HTTPS server. It can start without a certificate (handshakes fail and readiness stays false
 * until one is set) and swaps certificates in place with setSecureContext, so a rotation or a
 * rewritten managed certificate never needs a restart.
 */
export class WebhookHttpsServer {
  private readonly server: Server;
  private servedIdentity: string | null = null;
  private readonly certificateListeners: Array<(notAfter: Date) => void> = [];
  private closing = false;

  constructor(
    handler: RequestListener,
    private readonly logger: Logger,
  ) {
    this.server = createServer(
      { minVersion: 'TLSv1.2' },
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
    this.server.on('tlsClientError', (error: Error) => {
      this.logger.debug({ event: 'tls_handshake_failed', error: error.message }, 'TLS handshake failed');
    });
  }

  /** Serves this pair for new connections. Throws (keeping the current pair) if it cannot be used. */
  setCertificate(pair: ServingPair): void {
    // createSecureContext fails on a key that does not match: check before touching the server.
    createSecureContext({ cert: pair.certPem, key: pair.keyPem });
    this.server.setSecureContext({ cert: pair.certPem, key: pair.keyPem, minVersion: 'TLSv1.2' });
    this.servedIdentity = pairIdentity(pair);
    const notAfter = new Date(new X509Certificate(pair.certPem).validTo);
    for (const listener of this.certificateListeners) listener(notAfter);
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
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    // Connections that finish a request become idle; close them as they do.
    const sweep = setInterval(() => this.server.closeIdleConnections(), 100);
    const deadline = setTimeout(() => this.server.closeAllConnections(), drainMs);
    try {
      await closed;
    } finally {
      clearInterval(sweep);
      clearTimeout(deadline);
    }
  }
}
