'use strict';

const { fork } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');
const autocannon = require('autocannon');

// Measurement helpers shared by the benchmarks: percentiles, autocannon runs with exact latencies,
// server processes that report their port over IPC, and a description of the machine.

/** The value at percentile `p` (0-100) of an ascending array (nearest rank). */
function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

function summarizeLatencies(values) {
  const sorted = Float64Array.from(values).sort();
  const total = sorted.reduce((sum, value) => sum + value, 0);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
    mean: sorted.length ? total / sorted.length : NaN,
  };
}

function median(values) {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted.length % 2
    ? sorted[(sorted.length - 1) / 2]
    : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
}

/**
 * One autocannon run. autocannon's own histogram keeps whole milliseconds, too coarse for a
 * sub-millisecond baseline, so every response time is collected from its `response` event instead.
 */
function loadTest({ url, method = 'GET', body, headers, connections, durationSeconds }) {
  // Only the request fields go to autocannon; a side also names its server processes (compare).
  return new Promise((resolve, reject) => {
    const responseTimes = [];
    let failures = 0;
    const instance = autocannon(
      { url, method, body, headers, connections, duration: durationSeconds, pipelining: 1 },
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
 */
async function compare({ sides, connections, durationSeconds, warmupSeconds = 1 }) {
  const names = Object.keys(sides);
  for (const name of names) await loadTest({ ...sides[name], connections, durationSeconds: warmupSeconds });
  const runs = Object.fromEntries(names.map((name) => [name, []]));
  for (const name of [...names, ...[...names].reverse()]) {
    const serverProcesses = sides[name].processes || [];
    const cpuBefore = await Promise.all(
      serverProcesses.map((running) => running.request({ type: 'cpu-usage' })),
    );
    const result = await loadTest({ ...sides[name], connections, durationSeconds });
    const cpuAfter = await Promise.all(
      serverProcesses.map((running) => running.request({ type: 'cpu-usage' })),
    );
    // Server CPU per request is steadier than throughput when other work shares the cores.
    const cpuMicroseconds = cpuAfter.reduce(
      (sum, after, position) =>
        sum + after.user + after.system - cpuBefore[position].user - cpuBefore[position].system,
      0,
    );
    result.serverCpuMicrosecondsPerRequest = serverProcesses.length ? cpuMicroseconds / result.requests : NaN;
    runs[name].push(result);
  }
  const figures = {};
  for (const name of names) {
    const results = runs[name];
    figures[name] = {
      requestsPerSecond: median(results.map((result) => result.requestsPerSecond)),
      p50Ms: median(results.map((result) => result.latencyMs.p50)),
      p99Ms: median(results.map((result) => result.latencyMs.p99)),
      requests: results.reduce((sum, result) => sum + result.requests, 0),
      failed: results.reduce((sum, result) => sum + result.errors + result.non2xx + result.failures, 0),
      bytesPerResponse: Math.round(median(results.map((result) => result.bytesPerResponse))),
      serverCpuMicrosecondsPerRequest: median(
        results.map((result) => result.serverCpuMicrosecondsPerRequest),
      ),
    };
    // A failing server is fast: never report its figures as a result.
    if (figures[name].failed > 0)
      throw new Error(`${name} (${sides[name].url}): ${figures[name].failed} failed requests`);
  }
  const ratios = {};
  for (const name of names.filter((candidate) => candidate !== 'subject')) {
    ratios[name] = {
      throughput: figures.subject.requestsPerSecond / figures[name].requestsPerSecond,
      p99: figures.subject.p99Ms / figures[name].p99Ms,
      serverCpuPerRequest:
        figures.subject.serverCpuMicrosecondsPerRequest / figures[name].serverCpuMicrosecondsPerRequest,
    };
  }
  return { connections, ...figures, ratios };
}

/**
 * Starts `bench/servers/<script>` (or any script) in its own process and waits for its
 * `{type: 'ready', ...}` message. Servers run apart from the load generator so each has an event
 * loop of its own, as in a deployment.
 */
function startProcess(script, args = [], { execArgv = [], timeoutMs = 60_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = fork(path.resolve(__dirname, '..', script), args, {
      execArgv,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} did not report ready within ${timeoutMs} ms`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code} before it was ready`));
    });
    child.once('message', (message) => {
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({
        child,
        info: message,
        request: (command) => requestFromProcess(child, command),
        stop: () => stopProcess(child),
      });
    });
  });
}

/** Sends a command to a bench process and waits for the answer with the same `id`. */
function requestFromProcess(child, command) {
  const id = `${Date.now()}-${Math.random()}`;
  return new Promise((resolve, reject) => {
    const onMessage = (message) => {
      if (message.id !== id) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (message.error) reject(new Error(message.error));
      else resolve(message.result);
    };
    const onExit = (code) => {
      child.off('message', onMessage);
      reject(new Error(`process exited with ${code} while answering ${command.type}`));
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.send({ ...command, id });
  });
}

/** Serves `{type, id}` commands from the parent with `handlers[type]`. */
function serveCommands(handlers) {
  process.on('message', (message) => {
    const handler = handlers[message.type];
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown command ${message.type}`);
        return handler(message);
      })
      .then(
        (result) => process.send({ id: message.id, result }),
        (error) => process.send({ id: message.id, error: error.stack || String(error) }),
      );
  });
  // The parent going away ends the child: no stray servers after an interrupted run.
  process.on('disconnect', () => process.exit(0));
}

function stopProcess(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function machineInfo() {
  const packageJson = require('../../package.json');
  const dependencyVersion = (name) => {
    try {
      return require(`${name}/package.json`).version;
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
  startProcess,
  serveCommands,
  machineInfo,
};
