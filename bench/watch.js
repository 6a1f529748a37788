// @ts-check
'use strict';

// Watch path: an object changed on the API server until the change is in the controller's index
// (and so in `/resources/*`), at fixed change rates. Baseline: a bare watch client on the same API
// server in the same run, i.e. what delivery alone costs.

const { parseReport } = require('../dist/services/cli/wire-schemas');
const { startProcess } = require('./lib/processes');

/** @typedef {import('./lib/processes').RunningProcess<'servers/kubernetes-api.js'>} ApiServer */

const RATES = [
  { changesPerSecond: 100, durationMs: 5_000 },
  { changesPerSecond: 1_000, durationMs: 3_000 },
];

/**
 * @param {import('./lib/processes').RunningProcess<'servers/watch-client.js'>} client
 * @param {number} expected
 * @param {number} timeoutMs
 */
async function waitForDeliveries(client, expected, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const received = await client.request({ type: 'received' });
    if (received >= expected || Date.now() > deadline) return received;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Compares every policy's severity in the controller's HTTP reports with the API server's truth.
 * @param {ApiServer} apiServer
 * @param {number} controllerPort
 */
async function checkReportsMatch(apiServer, controllerPort) {
  const truth = await apiServer.request({ type: 'truth' });
  const namespaces = [...new Set(truth.map((entry) => entry.namespace))];
  let mismatches = 0;
  for (const namespace of namespaces) {
    const response = await fetch(`http://127.0.0.1:${controllerPort}/resources/reports/${namespace}`);
    const report = parseReport(await response.json());
    const reported = new Map(report.constraints.map((entry) => [entry.name, entry.severity]));
    for (const entry of truth.filter((candidate) => candidate.namespace === namespace))
      if (reported.get(entry.name) !== entry.severity) mismatches++;
  }
  return { policies: truth.length, mismatches };
}

/**
 * @param {'raw' | 'controller'} mode
 * @param {ApiServer} apiServer
 */
async function measureMode(mode, apiServer) {
  const client = await startProcess('servers/watch-client.js', [JSON.stringify({ mode, ...apiServer.info })]);
  try {
    const results = [];
    for (const rate of RATES) {
      await client.request({ type: 'take-delays' });
      const run = await apiServer.request({
        type: 'run-changes',
        rate: rate.changesPerSecond,
        durationMs: rate.durationMs,
      });
      await waitForDeliveries(client, run.changes, 10_000);
      const taken = await client.request({ type: 'take-delays' });
      results.push({
        changesPerSecond: rate.changesPerSecond,
        achievedPerSecond: run.changes / run.seconds,
        changes: run.changes,
        received: taken.received,
        delayMs: taken.delayMs,
      });
    }
    const consistency =
      mode === 'controller' ? await checkReportsMatch(apiServer, client.info.port) : undefined;
    return { results, consistency };
  } finally {
    await client.stop();
  }
}

async function runWatchBenchmark() {
  const apiServer = await startProcess('servers/kubernetes-api.js', [
    JSON.stringify({ namespaces: 20, policiesPerNamespace: 10 }),
  ]);
  try {
    const raw = await measureMode('raw', apiServer);
    const controller = await measureMode('controller', apiServer);
    const reportsMatchServer = controller.consistency;
    if (!reportsMatchServer) throw new Error('the controller mode compares reports with the server');
    return RATES.map((rate, position) => {
      const baseline = raw.results[position];
      const subject = controller.results[position];
      return {
        changesPerSecond: rate.changesPerSecond,
        baseline,
        subject,
        p50Ratio: subject.delayMs.p50 / baseline.delayMs.p50,
        p99Ratio: subject.delayMs.p99 / baseline.delayMs.p99,
        reportsMatchServer,
      };
    });
  } finally {
    await apiServer.stop();
  }
}

module.exports = { runWatchBenchmark };
