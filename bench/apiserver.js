// @ts-check
'use strict';

// What a developer waits for (issue 26): Deployment creates with `dryRun=All`, each with a name of
// its own, against the real kube-apiserver of the e2e tools (etcd + kube-apiserver started by
// test/e2e/provision/cluster.sh), at 1 and 16 clients, in three cases measured in one run: no
// webhook, a bare HTTPS webhook that allows everything (the floor any webhook pays: the API server's
// webhook call, TLS, JSON both ways), and Forewarn's webhook with its controller (a namespace of 20
// constraints, read from files). Cases run in palindromic order (A B C C B A) at each concurrency so
// drift in the shared machine's load hits every case alike; each case's figures are the median of
// its two runs. Skips with a message when the e2e tools are not built.
// FOREWARN_BENCH_PROFILE_DIR=<dir> writes CPU profiles of the webhook and the controller there.

const { generateSelfSignedBundle } = require('../dist/services/webhook/certs/self-signed');
const {
  TOOLS_MISSING,
  apiRequest,
  configure,
  deploymentText,
  startApiServer,
} = require('./lib/api-server-cluster');
const { namespaceObject } = require('./lib/cluster-objects');
const { loadTest, median } = require('./lib/measure');
const { startProcess } = require('./lib/processes');

const NAMESPACE = 'bench';

/** @typedef {{requestsPerSecond: number, p50Ms: number, p99Ms: number, requests: number}} CaseFigures */
/** @typedef {'none' | 'bare' | 'forewarn'} CaseName */

/**
 * Starts the webhook servers: the bare one (echoing the uid) and Forewarn's webhook and controller.
 * @param {{certPem: string, keyPem: string}} certificate
 * @param {import('./lib/processes').RunningProcess<keyof import('./lib/processes').ReadyInfo>[]} processes
 */
async function startWebhooks(certificate, processes) {
  const bare = await startProcess('servers/bare-https.js', [
    JSON.stringify({ certificate, answer: null, echoUid: true }),
  ]);
  processes.push(bare);
  // FOREWARN_BENCH_PROFILE_DIR=<dir>: CPU profiles of Forewarn's webhook and controller, written there.
  const profileDirectory = process.env.FOREWARN_BENCH_PROFILE_DIR;
  const profile = profileDirectory ? { execArgv: ['--cpu-prof', `--cpu-prof-dir=${profileDirectory}`] } : {};
  const controller = await startProcess(
    'servers/controller.js',
    [JSON.stringify({ namespaces: { [NAMESPACE]: 20 } })],
    profile,
  );
  processes.push(controller);
  const webhook = await startProcess(
    'servers/webhook.js',
    [JSON.stringify({ controllerUrl: `http://127.0.0.1:${controller.info.port}`, certificate })],
    profile,
  );
  processes.push(webhook);
  return { bare, controller, webhook };
}

/**
 * @param {{url: string, token: string, ca: string}} api
 * @param {Record<CaseName, {webhookUrl?: string}>} cases
 * @param {string} caPem
 * @param {{connections: number, durationSeconds: number}} load
 */
async function measureConcurrency(api, cases, caPem, { connections, durationSeconds }) {
  let sequence = 0;
  const runId = Date.now().toString(36);
  const side = {
    url: `${api.url}/apis/apps/v1/namespaces/${NAMESPACE}/deployments?dryRun=All`,
    method: /** @type {const} */ ('POST'),
    headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json' },
    nextBody: () => deploymentText(`web-${runId}-${connections}-${sequence++}`, NAMESPACE),
  };
  /** @type {CaseName[]} */
  const order = ['none', 'bare', 'forewarn'];
  /** @type {Record<CaseName, import('./lib/measure').LoadResult[]>} */
  const runs = { none: [], bare: [], forewarn: [] };
  let warnings = 0;
  for (const name of [...order, ...[...order].reverse()]) {
    const count = await configure(api, {
      webhookUrl: cases[name].webhookUrl,
      caPem,
      namespace: NAMESPACE,
      expectWarning: name === 'forewarn' ? /./ : undefined,
    });
    if (name === 'forewarn') warnings = count;
    await loadTest({ ...side, connections, durationSeconds: 1 });
    const result = await loadTest({ ...side, connections, durationSeconds });
    if (result.errors + result.non2xx + result.failures > 0 || result.requests === 0)
      throw new Error(
        `${name} at ${connections} clients: ${result.failures + result.non2xx} failed, ${result.errors} errors`,
      );
    runs[name].push(result);
  }
  /** @param {CaseName} name @returns {CaseFigures} */
  const figures = (name) => ({
    requestsPerSecond: median(runs[name].map((run) => run.requestsPerSecond)),
    p50Ms: median(runs[name].map((run) => run.latencyMs.p50)),
    p99Ms: median(runs[name].map((run) => run.latencyMs.p99)),
    requests: runs[name].reduce((sum, run) => sum + run.requests, 0),
  });
  const none = figures('none');
  const bare = figures('bare');
  const forewarn = figures('forewarn');
  return {
    connections,
    none,
    bare,
    forewarn,
    warningsPerCreate: warnings,
    forewarnOverBareMs: { p50: forewarn.p50Ms - bare.p50Ms, p99: forewarn.p99Ms - bare.p99Ms },
  };
}

/**
 * @param {{durationSeconds: number, concurrencies?: number[]}} options
 * @returns {Promise<{skipped: string} | {kubernetesVersion: string, rows: Awaited<ReturnType<typeof measureConcurrency>>[]}>}
 */
async function runApiServerBenchmark({ durationSeconds, concurrencies = [1, 16] }) {
  const cluster = await startApiServer();
  if (!cluster) return { skipped: TOOLS_MISSING };
  /** @type {import('./lib/processes').RunningProcess<keyof import('./lib/processes').ReadyInfo>[]} */
  const processes = [];
  try {
    const { api } = cluster;
    const created = await apiRequest(api, 'POST', '/api/v1/namespaces', namespaceObject(NAMESPACE));
    if (created.status !== 201) throw new Error(`namespace not created: ${JSON.stringify(created.body)}`);
    const bundle = await generateSelfSignedBundle({
      serviceName: 'forewarn-webhook',
      namespace: 'forewarn-system',
      extraSans: ['127.0.0.1'],
      now: new Date(),
    });
    const { bare, webhook } = await startWebhooks(
      { certPem: bundle.certPem, keyPem: bundle.keyPem },
      processes,
    );
    /** @type {Record<CaseName, {webhookUrl?: string}>} */
    const cases = {
      none: {},
      bare: { webhookUrl: `https://127.0.0.1:${bare.info.port}/validate` },
      forewarn: { webhookUrl: `https://127.0.0.1:${webhook.info.port}/validate` },
    };
    const rows = [];
    for (const connections of concurrencies)
      rows.push(await measureConcurrency(api, cases, bundle.caPem, { connections, durationSeconds }));
    return { kubernetesVersion: cluster.kubernetesVersion, rows };
  } finally {
    await Promise.all(processes.map((running) => running.stop()));
    await cluster.stop();
  }
}

module.exports = { runApiServerBenchmark };
