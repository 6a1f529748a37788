// @ts-check
'use strict';

// The peer benchmark's Node cases (bench/peers.js): Forewarn's webhook and controller on the demo
// cluster, and the floor of the spec's two-process design (a bare webhook querying a bare backend).

const { existsSync } = require('node:fs');
const path = require('node:path');
const { startProcess } = require('./processes');
const { summarizeLatencies } = require('./measure');

const DEMO_MANIFESTS = path.join(__dirname, '..', '..', 'examples', 'manifests');

/** @typedef {import('../peers').PeerCase} PeerCase */
/**
 * @typedef {object} InsideFigures
 * @property {import('./measure').LatencySummary} webhookMs a review's time in the webhook process
 * @property {import('./measure').LatencySummary} controllerQueryMs its query to the controller, as the webhook saw it
 * @property {number} newConnections connections the API server opened to the webhook in the run (TLS handshakes)
 * @property {number} checkBatches requests to the controller that carried several checks
 * @property {number} batchedChecks the checks they carried
 * @property {{p50: number, p99: number, max: number}} webhookLoopDelayMs
 * @property {{p50: number, p99: number, max: number}} controllerLoopDelayMs
 * @property {Record<string, import('./loop-watch').PauseSummary>} webhookGc garbage-collection pauses in the run, by kind
 * @property {Record<string, import('./loop-watch').PauseSummary>} controllerGc
 */

/** The opa binary of tools/build-opa.sh's cache, when built: Forewarn compiles Rego with it. */
function cachedOpa() {
  const found = path.join('/var/cache/forewarn-e2e/tools', 'opa-v1.22.3', 'opa');
  return existsSync(found) ? found : undefined;
}

/**
 * Forewarn's controller on the demo cluster and its webhook, from this checkout or from `root`, another
 * built checkout (FOREWARN_BENCH_BASELINE, a before-and-after run), with the deployed Node flags or
 * `nodeFlags` instead (FOREWARN_BENCH_BASELINE_FLAGS, a run that compares flags).
 * @param {{certPem: string, keyPem: string}} certificate
 * @param {Array<() => Promise<void>>} stops
 * @param {string} [root]
 * @param {readonly string[]} [nodeFlags]
 * @returns {Promise<PeerCase>}
 */
async function forewarnCase(certificate, stops, root, nodeFlags) {
  const opaPath = cachedOpa();
  /** @type {<Script extends 'servers/controller.js' | 'servers/webhook.js'>(script: Script) => Script} */
  const server = (script) =>
    root ? /** @type {typeof script} */ (path.join(root, 'bench', script)) : script;
  const controller = await startProcess(
    server('servers/controller.js'),
    [JSON.stringify({ manifests: DEMO_MANIFESTS, ...(opaPath ? { opaPath } : {}) })],
    { nodeFlags },
  );
  stops.push(controller.stop);
  const webhook = await startProcess(
    server('servers/webhook.js'),
    [JSON.stringify({ controllerUrl: `http://127.0.0.1:${controller.info.port}`, certificate })],
    { nodeFlags },
  );
  stops.push(webhook.stop);
  return {
    webhookUrl: `https://127.0.0.1:${webhook.info.port}/validate`,
    pids: [webhook.child.pid ?? 0, controller.child.pid ?? 0],
    expectWarning: /owner/,
    inside: {
      start: async () => {
        await Promise.all([
          webhook.request({ type: 'timing-start' }),
          controller.request({ type: 'loop-watch-start' }),
        ]);
      },
      take: async () => {
        const [timing, controllerLoop] = await Promise.all([
          webhook.request({ type: 'timing-take' }),
          controller.request({ type: 'loop-watch-take' }),
        ]);
        return insideFigures(timing, controllerLoop);
      },
    },
  };
}

/**
 * Where a review's time went inside Forewarn's two processes in one run: its time in the webhook
 * (received to answered) and in the controller query, and how long each main thread's loop stood
 * still, with the garbage collections of each.
 * @param {import('./processes').Commands['timing-take']['result']} timing
 * @param {import('./loop-watch').LoopWatchFigures} controllerLoop
 * @returns {InsideFigures}
 */
function insideFigures(timing, controllerLoop) {
  return {
    webhookMs: summarizeLatencies(timing.reviews),
    controllerQueryMs: summarizeLatencies(timing.queries),
    newConnections: timing.newConnections,
    // Checks that went to the controller together (services/webhook/check-batching.ts); a
    // baseline build without batches reports none.
    checkBatches: timing.batchedChecks?.length ?? 0,
    batchedChecks: (timing.batchedChecks ?? []).reduce((sum, checks) => sum + checks, 0),
    webhookLoopDelayMs: timing.loop.loopDelayMs,
    controllerLoopDelayMs: controllerLoop.loopDelayMs,
    webhookGc: timing.loop.gc,
    controllerGc: controllerLoop.gc,
  };
}

/**
 * The floor of the spec's design: a bare HTTPS webhook that posts each review's object to a bare
 * HTTP backend and answers once it replied. Both are plain Node, so what Forewarn costs above this
 * pair is its own work; what this pair costs above Gatekeeper is the second process.
 * @param {{certPem: string, keyPem: string}} certificate
 * @param {Array<() => Promise<void>>} stops
 * @param {{spinMicroseconds?: number, workers?: number}} [backendWork] CPU the backend spends per
 *   review after its parse, on its main thread or in worker threads (bench/servers/bare-backend.js)
 * @returns {Promise<PeerCase>}
 */
async function barePairCase(certificate, stops, backendWork = {}) {
  const backend = await startProcess('servers/bare-backend.js', [JSON.stringify(backendWork)]);
  stops.push(backend.stop);
  const front = await startProcess('servers/bare-https.js', [
    JSON.stringify({
      certificate,
      answer: null,
      echoUid: true,
      backendUrl: `http://127.0.0.1:${backend.info.port}/api/v1/admission-check`,
      forwardReview: true,
    }),
  ]);
  stops.push(front.stop);
  return {
    webhookUrl: `https://127.0.0.1:${front.info.port}/validate`,
    pids: [front.child.pid ?? 0, backend.child.pid ?? 0],
  };
}

module.exports = { barePairCase, forewarnCase };
