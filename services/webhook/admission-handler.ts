import type { IncomingMessage, ServerResponse } from 'node:http';
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
import type { ConstraintQueryResult, ConstraintSource } from './controller-client';
import type { ControllerQuery } from '../model/admission-query';
import { DECLINED_REVIEW_STATUS, forwardedReviewOf } from '../model/forwarded-review';
import { readRequestBody } from './request-body';
import { admissionOutcome, type AdmissionFacts, type WebhookMetrics } from './metrics';
import { errorMessage } from '../model/error-message';

// The webhook's admission route (spec 4.3, 4.5): one AdmissionReview in, an allowed AdmissionReview
// with warnings out (rule B-1: every branch, the catch included, answers allowed with HTTP 200). A
// review written the API server's way is forwarded whole to the controller and parsed only there
// (model/forwarded-review.ts); any other review, or one the controller declines, is read here.

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

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'Content-Type': JSON_CONTENT_TYPE,
    'Content-Length': Buffer.byteLength(text),
  });
  response.end(text);
}

export function sendAllowed(
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

/** What names a forwarded review in the log, read from its text only when a line is written. */
function describeReviewText(text: string): { fields: Record<string, unknown>; labels: unknown } {
  const parsed = parseAdmissionReviewText(text);
  return parsed.ok
    ? { fields: describeRequest(parsed.request), labels: parsed.request.labels }
    : { fields: { uid: parsed.uid }, labels: null };
}

/**
 * The controller's answer to one query, timed for the metrics. A forwarded review the controller
 * declined is not a failed query: the webhook asks again, and that query is the one counted.
 */
async function queryController(
  options: WebhookAppOptions,
  query: ControllerQuery,
  caller: { fromApiServer: boolean; forwarded: boolean },
): Promise<ConstraintQueryResult> {
  const constraints = caller.fromApiServer
    ? options.constraints
    : (options.callerTrust?.anonymousConstraints ?? options.constraints);
  const queryStarted = performance.now();
  const result = await constraints.query(query);
  if (!caller.forwarded || !declinedByController(result))
    options.metrics?.observeControllerQuery(
      result.ok ? 'ok' : result.reason,
      (performance.now() - queryStarted) / 1000,
    );
  return result;
}

/** Warnings from the controller's answer, or the reason there are none; never throws. */
function warningsOf(
  options: WebhookAppOptions,
  result: ConstraintQueryResult,
  /** The review's fields for the log (uid, namespace, name, ...), and its labels for the debug line. */
  describe: () => { fields: Record<string, unknown>; labels: unknown },
): { facts: AdmissionFacts; warnings: string[] } {
  const { logger } = options;
  if (!result.ok) {
    logger.warn(
      {
        event: 'controller_query_failed',
        reason: result.reason,
        detail: result.detail,
        ...describe().fields,
      },
      'constraint query to the controller failed; request allowed without warnings. Check that the controller is running and that GET <controller-url>/api/v1/health answers from the webhook pod',
    );
    return { facts: { reviewParsed: true, query: result.reason, warnings: 0 }, warnings: [] };
  }
  if (result.skippedEntries > 0) {
    logger.warn(
      { event: 'controller_entries_skipped', skipped: result.skippedEntries, ...describe().fields },
      'controller listed constraints without a known severity or a summary; they were skipped. Check that controller and webhook versions match',
    );
  }
  const warnings = buildWarnings(result.constraints);
  // Guarded: the fields are built on every review otherwise, even with debug off.
  if (logger.isLevelEnabled('debug')) {
    const described = describe();
    logger.debug(
      {
        event: 'admission',
        ...described.fields,
        labels: described.labels,
        constraints: result.constraints.length,
        warnings: warnings.length,
      },
      'admission reviewed',
    );
  }
  return { facts: { reviewParsed: true, query: 'ok', warnings: warnings.length }, warnings };
}

/**
 * A review forwarded whole (model/forwarded-review.ts) that the controller declined (422: nothing to
 * check) or could not read (400, an older controller among them): the webhook reads it itself.
 */
function declinedByController(result: ConstraintQueryResult): boolean {
  return !result.ok && (result.status === DECLINED_REVIEW_STATUS || result.status === 400);
}

/**
 * Every request that is not a probe is an admission request: a registration pointing at `/` or
 * `/validate/` still gets warnings, and nothing answers 404 to the API server. Rule B-1: every
 * branch, the catch included, answers an allowed AdmissionReview (HTTP 200).
 */
export function admissionHandler(options: WebhookAppOptions) {
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
      const fromApiServer = options.callerTrust?.isApiServer(request) ?? true;
      // A review as the API server writes it goes to the controller as it is, parsed there only.
      const forwarded = forwardedReviewOf(body.text, 'warnings');
      if (forwarded) {
        uid = forwarded.uid;
        reviewApiVersion = forwarded.reviewApiVersion;
        const result = await queryController(
          options,
          { checkBody: forwarded.checkBody },
          { fromApiServer, forwarded: true },
        );
        if (!declinedByController(result)) {
          metrics?.countForwardedReview();
          const text = body.text;
          const reviewed = warningsOf(options, result, () => describeReviewText(text));
          return answer(reviewed.facts, reviewed.warnings);
        }
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
      const review = parsed.request;
      uid = review.uid;
      reviewApiVersion = review.reviewApiVersion;
      const result = await queryController(options, constraintQueryOf(review, 'warnings'), {
        fromApiServer,
        forwarded: false,
      });
      const reviewed = warningsOf(options, result, () => ({
        fields: describeRequest(review),
        labels: review.labels,
      }));
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
