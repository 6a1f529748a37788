// @ts-check
'use strict';

// The real admission webhook (built code), wired as main.ts wires it: createWebhookApp on
// WebhookHttpsServer with metrics, querying the controller through the coalescing controller client, serving a self-signed pair made by the webhook's
// own generator. argv[2]: JSON `{"controllerUrl": "http://127.0.0.1:PORT", "certificate": {...}}`.
// Failed controller queries are counted: a fail-open answer has no warnings and is cheap, so a run
// with failures would flatter the webhook; the benchmark refuses such a run. With `"labelQuery": true`
// the webhook asks the label query (`GET /api/v1/constraints`) instead of `POST /api/v1/admission-check`,
// as it did before verdicts (and still does for objects over 1 MiB): the reference of issue 16.

const { createControllerSource } = require('../../dist/services/webhook/controller-source');
const { createWebhookMetrics } = require('../../dist/services/webhook/metrics');
const { createWebhookApp, WebhookHttpsServer } = require('../../dist/services/webhook/server');
const { createLogger } = require('../../dist/services/logging/logger');
const { warmUpWebhook } = require('../../dist/services/webhook/warm-up');
const { DECLINED_REVIEW_STATUS } = require('../../dist/services/model/forwarded-review');
const { z } = require('zod');
// The shipped process's whole module graph (main.ts imports the Kubernetes client for the default
// self-signed certificate mode, about 26 MB of heap): its memory and its garbage collections at rest
// are the ones measured. main.ts only runs when it is the entry point.
require('../../dist/services/webhook/main');
const { reportReady, serveCommands } = require('../lib/processes');
const { createLoopWatch } = require('../lib/loop-watch');

/**
 * Between `start` and `take`: each review's time in this process (request received to response
 * finished) and its controller query's, the connections opened (each a TLS handshake), with the
 * main thread's loop delay and pauses (the peer benchmark's FOREWARN_PEERS_INSIDE, which this
 * process inherits). Without it, nothing is recorded at all: the measured runs pay nothing for it.
 */
function createReviewTiming() {
  /** @type {{reviews: number[], queries: number[], newConnections: number, batchedChecks: number[]} | undefined} */
  let timing;
  const loopWatch = createLoopWatch();
  const enabled = process.env.FOREWARN_PEERS_INSIDE === '1';
  // Connections seen so far: one first seen in the window is a TLS handshake in it.
  const seen = new WeakSet();
  return {
    /**
     * @param {import('node:http').IncomingMessage} request
     * @param {import('node:http').ServerResponse} response
     */
    timeReview(request, response) {
      if (!enabled) return;
      if (!timing) {
        seen.add(request.socket);
        return;
      }
      if (!seen.has(request.socket)) {
        seen.add(request.socket);
        timing.newConnections++;
      }
      const received = performance.now();
      const reviews = timing.reviews;
      response.on('finish', () => reviews.push(performance.now() - received));
    },
    /**
     * @template Result
     * @param {() => Promise<Result>} query
     */
    async timeQuery(query) {
      if (!timing) return query();
      const queries = timing.queries;
      const started = performance.now();
      const result = await query();
      queries.push(performance.now() - started);
      return result;
    },
    /** @param {number} checks the size of a batch of checks sent to the controller */
    countBatch(checks) {
      timing?.batchedChecks.push(checks);
    },
    start() {
      if (!enabled) throw new Error('review timing needs FOREWARN_PEERS_INSIDE=1 in the environment');
      timing = { reviews: [], queries: [], newConnections: 0, batchedChecks: [] };
      loopWatch.start();
      return null;
    },
    take() {
      const taken = timing ?? { reviews: [], queries: [], newConnections: 0, batchedChecks: [] };
      timing = undefined;
      return { ...taken, loop: loopWatch.take() };
    },
  };
}

async function main() {
  const settings = z
    .object({
      controllerUrl: z.string(),
      certificate: z.object({ certPem: z.string(), keyPem: z.string() }),
      labelQuery: z.boolean().optional(),
      noWarmUp: z.boolean().optional(),
    })
    .parse(JSON.parse(process.argv[2]));
  const logger = createLogger({ service: 'webhook', level: 'error', destination: process.stderr });
  // Wired as services/webhook/main.ts wires it (coalescing, checks in flight together), metrics on.
  const timing = createReviewTiming();
  const client = createControllerSource(
    { baseUrl: settings.controllerUrl },
    { observeBatch: (checks) => timing.countBatch(checks) },
  );
  /** @type {import('../lib/processes').Commands['query-counts']['result']} */
  const queries = { ok: 0, failed: 0, lastFailure: null };
  /** @type {import('../../dist/services/webhook/controller-client').ConstraintSource} */
  const countingSource = {
    query: async (query) => {
      // Label queries only: a review forwarded whole is declined as the controller declines one it
      // does not check, so the webhook reads it itself and asks by its labels.
      let sent = query;
      if (settings.labelQuery) {
        if (!('namespace' in query))
          return {
            ok: false,
            reason: 'bad_status',
            detail: 'label queries only',
            status: DECLINED_REVIEW_STATUS,
          };
        sent = { ...query, checkBody: undefined };
      }
      const result = await timing.timeQuery(() => client.query(sent));
      if (result.ok) queries.ok++;
      else {
        queries.failed++;
        queries.lastFailure = `${result.reason}: ${result.detail}`;
      }
      return result;
    },
  };
  const server = new WebhookHttpsServer((request, response) => {
    timing.timeReview(request, response);
    app(request, response);
  }, logger);
  const app = createWebhookApp({
    constraints: countingSource,
    logger,
    isReady: () => server.hasCertificate(),
    metrics: createWebhookMetrics(),
  });
  server.setCertificate(settings.certificate);
  const port = await server.listen({ host: '127.0.0.1', port: 0 });
  // As main.ts does once it can serve (its retries aside: the controller here is ready already),
  // before reporting ready; the warm-up's own queries are not counted.
  if (!settings.noWarmUp) {
    const warmUp = await warmUpWebhook({
      servingPair: () => server.servingPair(),
      constraints: client,
      logger,
    });
    if (!warmUp.warmed) throw new Error(`webhook warm-up failed: ${warmUp.reason}`);
  }
  serveCommands({
    'query-counts': () => ({ ...queries }),
    'cpu-usage': () => process.cpuUsage(),
    'timing-start': () => timing.start(),
    'timing-take': () => timing.take(),
  });
  process.on('SIGTERM', () =>
    server
      .close(1000)
      .then(() => client.close())
      .then(() => process.exit(0)),
  );
  reportReady('servers/webhook.js', { port });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
