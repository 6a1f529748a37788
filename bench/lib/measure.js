// @ts-check
'use strict';

const os = require('node:os');
const autocannon = require('autocannon');

// Measurement helpers shared by the benchmarks: percentiles, autocannon runs with exact latencies,
// comparisons of sides served by bench processes (./processes), and a description of the machine.

/** @typedef {import('./processes').ReadyInfo} ReadyInfo */
/**
 * @template {keyof ReadyInfo} Script
 * @typedef {import('./processes').RunningProcess<Script>} RunningProcess
 */

/**
 * @typedef {object} LatencySummary
 * @property {number} count
 * @property {number} p50
 * @property {number} p90
 * @property {number} p99
 * @property {number} max
 * @property {number} mean
 */

/**
 * What autocannon sends: the request part of a comparison's side.
 * @typedef {object} LoadRequest
 * @property {string} url
 * @property {import('autocannon').Request['method']} [method]
 * @property {string} [body]
 * @property {Record<string, string>} [headers]
 * @property {() => string} [nextBody] a body per request (distinct reviews) instead of `body`
 */

/**
 * @typedef {object} LoadResult
 * @property {number} requests
 * @property {number} requestsPerSecond
 * @property {LatencySummary} latencyMs
 * @property {number} errors
 * @property {number} non2xx
 * @property {number} failures
 * @property {number} bytesPerResponse
 */

/**
 * A side of a comparison: a request and the server processes whose CPU it costs.
 * @typedef {LoadRequest & {processes?: RunningProcess<keyof ReadyInfo>[]}} Side
 */

/**
 * @typedef {object} SideFigures
 * @property {number} requestsPerSecond
 * @property {number} p50Ms
 * @property {number} p99Ms
 * @property {number} requests
 * @property {number} failed
 * @property {number} bytesPerResponse
 * @property {number} serverCpuMicrosecondsPerRequest
 */

/**
 * The subject's figures over another side's.
 * @typedef {object} Ratios
 * @property {number} throughput
 * @property {number} p99
 * @property {number} serverCpuPerRequest
 */

/**
 * @template {string} Name
 * @typedef {{connections: number, ratios: Record<Exclude<Name, 'subject'>, Ratios>} & Record<Name, SideFigures>} Comparison
 */

/**
 * The value at percentile `p` (0-100) of an ascending array (nearest rank).
 * @param {ArrayLike<number>} sorted
 * @param {number} p
 */
function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/**
 * @param {Iterable<number>} values
 * @returns {LatencySummary}
 */
function summarizeLatencies(values) {
  const sorted = Float64Array.from(values).sort();
  const total = sorted.reduce((sum, value) => sum + value, 0);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
    mean: sorted.length ? total / sorted.length : NaN,
  };
}

/** @param {number[]} values */
function median(values) {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted.length % 2
    ? sorted[(sorted.length - 1) / 2]
    : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
}

/**
 * One autocannon run. autocannon's own histogram keeps whole milliseconds, too coarse for a
 * sub-millisecond baseline, so every response time is collected from its `response` event instead.
 * `overallRate`: requests per second across all connections (steady traffic) instead of as fast
 * as the server answers.
 * @param {LoadRequest & {connections: number, durationSeconds: number, overallRate?: number}} options
 * @returns {Promise<LoadResult>}
 */
function loadTest({
  url,
  method = 'GET',
  body,
  headers,
  nextBody,
  connections,
  durationSeconds,
  overallRate,
}) {
  // Only the request fields go to autocannon; a side also names its server processes (compare).
  return new Promise((resolve, reject) => {
    /** @type {number[]} */
    const responseTimes = [];
    let failures = 0;
    // autocannon computes each request's content-length from the body setupRequest returns.
    const requests = nextBody
      ? [
          {
            method,
            headers,
            setupRequest: (/** @type {object} */ request) => ({ ...request, body: nextBody() }),
          },
        ]
      : undefined;
    const instance = autocannon(
      {
        url,
        method,
        body,
        headers,
        requests,
        connections,
        duration: durationSeconds,
        pipelining: 1,
        ...(overallRate ? { overallRate } : {}),
      },
      (error, result) => {
        if (error) return reject(error);
        const elapsedSeconds = result.duration;
        resolve({
          requests: responseTimes.length,
          requestsPerSecond: responseTimes.length / elapsedSeconds,
          latencyMs: summarizeLatencies(responseTimes),
          errors: result.errors + result.timeouts,
          non2xx: result.non2xx,
          failures,
          bytesPerResponse: responseTimes.length ? result.throughput.total / responseTimes.length : 0,
        });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) responseTimes.push(responseTime);
      else failures++;
    });
  });
}

/**
 * A comparison at one concurrency of a subject against a baseline (and optionally further
 * references): after a warm-up of each, the sides run in palindromic order (A B C C B A) so drift
 * in the shared machine's load hits every side alike; each side's figures are the median of its runs.
 * @template {string} Name
 * @param {{sides: Record<Name, Side> & {subject: Side}, connections: number, durationSeconds: number, warmupSeconds?: number}} options
 * @returns {Promise<Comparison<Name>>}
 */
async function compare({ sides, connections, durationSeconds, warmupSeconds = 1 }) {
  /** @type {Map<string, Side>} */
  const sidesByName = new Map(Object.entries(sides));
  const names = [...sidesByName.keys()];
  for (const side of sidesByName.values())
    await loadTest({ ...side, connections, durationSeconds: warmupSeconds });
  /** @type {Map<string, MeasuredRun[]>} */
  const runs = new Map(names.map((name) => [name, []]));
  for (const [name, side] of [...sidesByName, ...[...sidesByName].reverse()])
    runs.get(name)?.push(await measureSide(side, connections, durationSeconds));
  /** @type {Record<string, SideFigures>} */
  const figures = {};
  for (const name of names) {
    figures[name] = figuresOf(runs.get(name) ?? []);
    // A failing server is fast: never report its figures as a result.
    if (figures[name].requests === 0)
      throw new Error(
        `${name} (${sidesByName.get(name)?.url}): no request completed; the machine is too busy`,
      );
    if (figures[name].failed > 0)
      throw new Error(`${name} (${sidesByName.get(name)?.url}): ${figures[name].failed} failed requests`);
  }
  /** @type {Record<string, Ratios>} */
  const ratios = {};
  for (const name of names.filter((candidate) => candidate !== 'subject')) {
    ratios[name] = {
      throughput: figures.subject.requestsPerSecond / figures[name].requestsPerSecond,
      p99: figures.subject.p99Ms / figures[name].p99Ms,
      serverCpuPerRequest:
        figures.subject.serverCpuMicrosecondsPerRequest / figures[name].serverCpuMicrosecondsPerRequest,
    };
  }
  // Keyed by the names of `sides`, as Comparison<Name> says.
  return /** @type {Comparison<Name>} */ ({ connections, ...figures, ratios });
}

/** @typedef {LoadResult & {serverCpuMicrosecondsPerRequest: number}} MeasuredRun */

/**
 * One measured run of a side, with the CPU its server processes spent on it.
 * @param {Side} side
 * @param {number} connections
 * @param {number} durationSeconds
 * @returns {Promise<MeasuredRun>}
 */
async function measureSide(side, connections, durationSeconds) {
  const serverProcesses = side.processes || [];
  const cpuBefore = await Promise.all(
    serverProcesses.map((running) => running.request({ type: 'cpu-usage' })),
  );
  const result = await loadTest({ ...side, connections, durationSeconds });
  const cpuAfter = await Promise.all(
    serverProcesses.map((running) => running.request({ type: 'cpu-usage' })),
  );
  // Server CPU per request is steadier than throughput when other work shares the cores.
  const cpuMicroseconds = cpuAfter.reduce(
    (sum, after, position) =>
      sum + after.user + after.system - cpuBefore[position].user - cpuBefore[position].system,
    0,
  );
  return {
    ...result,
    serverCpuMicrosecondsPerRequest: serverProcesses.length ? cpuMicroseconds / result.requests : NaN,
  };
}

/**
 * A side's figures: the median of its runs.
 * @param {MeasuredRun[]} results
 * @returns {SideFigures}
 */
function figuresOf(results) {
  return {
    requestsPerSecond: median(results.map((result) => result.requestsPerSecond)),
    p50Ms: median(results.map((result) => result.latencyMs.p50)),
    p99Ms: median(results.map((result) => result.latencyMs.p99)),
    requests: results.reduce((sum, result) => sum + result.requests, 0),
    failed: results.reduce((sum, result) => sum + result.errors + result.non2xx + result.failures, 0),
    bytesPerResponse: Math.round(median(results.map((result) => result.bytesPerResponse))),
    serverCpuMicrosecondsPerRequest: median(results.map((result) => result.serverCpuMicrosecondsPerRequest)),
  };
}

function machineInfo() {
  const packageJson = require('../../package.json');
  /** @param {string} name */
  const dependencyVersion = (name) => {
    try {
      /** @type {unknown} */
      const manifest = require(`${name}/package.json`);
      return typeof manifest === 'object' && manifest !== null && 'version' in manifest
        ? String(manifest.version)
        : 'unknown';
    } catch {
      return 'not installed';
    }
  };
  const cpus = os.cpus();
  return {
    date: new Date().toISOString(),
    cpus: cpus.length,
    cpuModel: cpus[0] ? cpus[0].model : 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    loadAverageAtStart: os.loadavg().map((load) => Math.round(load * 100) / 100),
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    package: `${packageJson.name}@${packageJson.version}`,
    versions: {
      express: dependencyVersion('express'),
      undici: dependencyVersion('undici'),
      autocannon: dependencyVersion('autocannon'),
      '@kubernetes/client-node': dependencyVersion('@kubernetes/client-node'),
    },
  };
}

module.exports = {
  percentile,
  summarizeLatencies,
  median,
  loadTest,
  compare,
  machineInfo,
};
