import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { collectProcessMetrics } from '../logging/process-metrics';
import type { Severity } from '../model/api';
import type { ConstraintQueryFailure } from './controller-client';

// Prometheus metrics of the webhook (issue 7; described in docs/metrics.md), defined here so the
// names and labels match the controller's conventions. The webhook's owner wires them into the
// server (`GET /metrics` on the HTTPS port and the observe calls in the admission handler); nothing
// in this file touches a request.

export const ADMISSION_OUTCOMES = ['warned', 'clean', 'controller_error', 'timeout', 'bad_request'] as const;
export type AdmissionOutcome = (typeof ADMISSION_OUTCOMES)[number];

export type ControllerQueryResult = 'ok' | ConstraintQueryFailure;

export interface AdmissionFacts {
  /** false: the body was not a usable AdmissionReview (invalid, oversized, wrong content type). */
  reviewParsed: boolean;
  /** The controller query's result; undefined when no query was made. */
  query?: ControllerQueryResult;
  warnings: number;
}

/** The outcome label of one admission request: what an operator alerts and graphs on. */
export function admissionOutcome(facts: AdmissionFacts): AdmissionOutcome {
  if (!facts.reviewParsed) return 'bad_request';
  if (facts.query === 'timeout') return 'timeout';
  if (facts.query !== undefined && facts.query !== 'ok') return 'controller_error';
  return facts.warnings > 0 ? 'warned' : 'clean';
}

export interface WebhookMetrics {
  registry: Registry;
  /** Serves the text exposition format. */
  handler: (request: IncomingMessage, response: ServerResponse) => void;
  observeAdmission(outcome: AdmissionOutcome, seconds: number): void;
  observeControllerQuery(result: ControllerQueryResult, seconds: number): void;
  /** Counts warnings by the severity their prefix states (`[CRITICAL]`, `[WARNING]`). */
  countWarnings(warnings: readonly string[]): void;
  /**
   * A review handed to the controller whole (model/forwarded-review.ts), not parsed by the webhook;
   * one the controller declined (and the webhook then read) is not counted.
   */
  countForwardedReview(): void;
  /** A batch of checks sent to the controller in one request (check-batching.ts), and its size. */
  countCheckBatch(checks: number): void;
  /** The serving certificate's notAfter, so an alert catches a rotation that did not happen. */
  setCertificateExpiry(notAfter: Date): void;
  /** Work arrived (a request): the event-loop delay is sampled while the process works. */
  noteActivity(): void;
}

const WARNING_PREFIXES: ReadonlyArray<[string, Severity]> = [
  ['[CRITICAL]', 'Critical'],
  ['[WARNING]', 'Warning'],
];

export function createWebhookMetrics(options: { processMetrics?: boolean } = {}): WebhookMetrics {
  const registry = new Registry();
  const loopDelay = options.processMetrics !== false ? collectProcessMetrics(registry) : undefined;
  const admissions = new Histogram({
    name: 'forewarn_webhook_admission_duration_seconds',
    help: 'Time to answer AdmissionReviews, by outcome (warned, clean, controller_error, timeout, bad_request)',
    labelNames: ['outcome'],
    // The API server gives the webhook 5 s by default and the controller query 3 s.
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5],
    registers: [registry],
  });
  const queries = new Histogram({
    name: 'forewarn_webhook_controller_query_duration_seconds',
    help: 'Time of the constraint query to the controller, by result (ok, timeout, unreachable, bad_status, bad_body)',
    labelNames: ['result'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 3],
    registers: [registry],
  });
  const warnings = new Counter({
    name: 'forewarn_webhook_warnings_total',
    help: 'Admission warnings returned, by severity',
    labelNames: ['severity'],
    registers: [registry],
  });
  const forwardedReviews = new Counter({
    name: 'forewarn_webhook_reviews_forwarded_total',
    help: 'Admission reviews handed to the controller as the API server wrote them, unparsed by the webhook (the others are read by the webhook)',
    registers: [registry],
  });
  const checkBatches = new Counter({
    name: 'forewarn_webhook_check_batches_total',
    help: 'Requests to the controller that carried several admission checks (the ones that arrived while another query was in flight)',
    registers: [registry],
  });
  const batchedChecks = new Counter({
    name: 'forewarn_webhook_batched_checks_total',
    help: 'Admission checks sent to the controller in a batch; divided by forewarn_webhook_check_batches_total, the mean batch size',
    registers: [registry],
  });
  const certificateExpiry = new Gauge({
    name: 'forewarn_webhook_certificate_expiry_timestamp_seconds',
    help: 'When the serving certificate expires (Unix time); 0 before one is loaded',
    registers: [registry],
  });
  // Present from the start, so rate() and "no warnings yet" are distinguishable from "no data".
  for (const outcome of ADMISSION_OUTCOMES) admissions.zero({ outcome });
  for (const [, severity] of WARNING_PREFIXES) warnings.inc({ severity }, 0);
  certificateExpiry.set(0);

  return {
    registry,
    handler: (_request, response) => {
      registry
        .metrics()
        .then((text) => {
          response.writeHead(200, {
            'Content-Type': registry.contentType,
            'Content-Length': Buffer.byteLength(text),
          });
          response.end(text);
        })
        .catch(() => {
          response.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
          response.end('metrics could not be collected\n');
        });
    },
    observeAdmission: (outcome, seconds) => admissions.observe({ outcome }, seconds),
    observeControllerQuery: (result, seconds) => queries.observe({ result }, seconds),
    countWarnings: (texts) => {
      for (const text of texts) {
        const severity = WARNING_PREFIXES.find(([prefix]) => text.startsWith(prefix))?.[1];
        if (severity) warnings.inc({ severity });
      }
    },
    countForwardedReview: () => forwardedReviews.inc(),
    countCheckBatch: (checks) => {
      checkBatches.inc();
      batchedChecks.inc(checks);
    },
    setCertificateExpiry: (notAfter) => certificateExpiry.set(notAfter.getTime() / 1000),
    noteActivity: loopDelay ? () => loopDelay.noteActivity() : () => undefined,
  };
}
