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

const { execFile } = require('node:child_process');
const { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } = require('node:fs');
const https = require('node:https');
const os = require('node:os');
const path = require('node:path');
const { generateSelfSignedBundle } = require('../dist/services/webhook/certs/self-signed');
const { namespaceObject } = require('./lib/cluster-objects');
const { loadTest, median } = require('./lib/measure');
const { startProcess } = require('./lib/processes');

const NAMESPACE = 'bench';
const TOOLS_CACHE = '/var/cache/forewarn-e2e/tools';
const CLUSTER_SCRIPT = path.join(__dirname, '..', 'test', 'e2e', 'provision', 'cluster.sh');
const WEBHOOK_NAME = 'forewarn-bench';
/** The API server reads webhook configurations through an informer: give a change time to land. */
const CONFIGURATION_SETTLE_MS = 3000;

/** @typedef {{requestsPerSecond: number, p50Ms: number, p99Ms: number, requests: number}} CaseFigures */
/** @typedef {'none' | 'bare' | 'forewarn'} CaseName */

/**
 * A directory with etcd, kube-apiserver, kube-controller-manager and kubectl: FOREWARN_TOOLS_BIN,
 * or links (in a temporary directory) to the newest builds in the e2e tools cache; undefined when
 * they are not built.
 * @returns {{binDir: string, cleanup: () => void} | undefined}
 */
function toolsBinDir() {
  const configured = process.env.FOREWARN_TOOLS_BIN;
  if (configured) return { binDir: configured, cleanup: () => undefined };
  if (!existsSync(TOOLS_CACHE)) return undefined;
  const folders = readdirSync(TOOLS_CACHE).sort();
  const newest = (/** @type {string} */ prefix) =>
    folders.filter((folder) => folder.startsWith(prefix)).pop();
  const kubernetes = newest('kubernetes-v');
  const etcd = newest('etcd-v');
  if (!kubernetes || !etcd) return undefined;
  const binaries = [
    path.join(TOOLS_CACHE, kubernetes, 'kube-apiserver'),
    path.join(TOOLS_CACHE, kubernetes, 'kube-controller-manager'),
    path.join(TOOLS_CACHE, kubernetes, 'kubectl'),
    path.join(TOOLS_CACHE, etcd, 'etcd'),
  ];
  if (!binaries.every((binary) => existsSync(binary))) return undefined;
  const binDir = mkdtempSync(path.join(os.tmpdir(), 'forewarn-bench-tools-'));
  for (const binary of binaries) symlinkSync(binary, path.join(binDir, path.basename(binary)));
  return { binDir, cleanup: () => rmSync(binDir, { recursive: true, force: true }) };
}

/**
 * Runs cluster.sh with a subcommand; resolves with its stdout.
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} env
 * @returns {Promise<string>}
 */
function clusterScript(args, env) {
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      [CLUSTER_SCRIPT, ...args],
      { env, maxBuffer: 4 * 1024 * 1024 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`cluster.sh ${args[0]} failed: ${stderr.slice(-2000)}`)) : resolve(stdout),
    );
  });
}

/** @param {string} text KEY='value' lines */
function parseEnvFile(text) {
  /** @type {Record<string, string>} */
  const values = {};
  for (const match of text.matchAll(/^([A-Z0-9_]+)='(.*)'$/gm)) values[match[1]] = match[2];
  return values;
}

/**
 * A JSON request to the API server with the admin token; resolves with status and parsed body.
 * @param {{url: string, token: string, ca: string}} api
 * @param {string} method
 * @param {string} requestPath
 * @param {unknown} [body]
 * @returns {Promise<{status: number, body: unknown, warnings: string[]}>}
 */
function apiRequest(api, method, requestPath, body) {
  return new Promise((resolve, reject) => {
    const request = https.request(
      `${api.url}${requestPath}`,
      {
        method,
        ca: api.ca,
        headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json' },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => {
          const warningHeader = response.headers.warning;
          resolve({
            status: response.statusCode ?? 0,
            body: text ? JSON.parse(text) : null,
            warnings: warningHeader ? String(warningHeader).split(/,(?=\s*299 )/) : [],
          });
        });
      },
    );
    request.on('error', reject);
    request.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/**
 * The Deployment a developer applies, with a name of its own per request.
 * @param {string} name
 */
function deploymentText(name) {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NAMESPACE, labels: { app: 'web', tier: 'frontend', instance: name } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web', tier: 'frontend', instance: name } },
      template: {
        metadata: { labels: { app: 'web', tier: 'frontend', instance: name } },
        spec: {
          containers: [
            {
              name: 'web',
              image: 'registry.example.com/web:1.4.2',
              resources: { requests: { cpu: '100m', memory: '128Mi' } },
            },
          ],
        },
      },
    },
  });
}

/**
 * The webhook registration of one case (none: no registration). sideEffects None: the API server
 * calls webhooks on dry-run requests only when they declare none.
 * @param {string} url
 * @param {string} caPem
 */
function webhookConfiguration(url, caPem) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: WEBHOOK_NAME },
    webhooks: [
      {
        name: 'validate.bench.forewarn.io',
        clientConfig: { url, caBundle: Buffer.from(caPem).toString('base64') },
        rules: [
          { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] },
        ],
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NAMESPACE } },
        failurePolicy: 'Ignore',
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        timeoutSeconds: 5,
      },
    ],
  };
}

/**
 * Registers the case's webhook (or none) and waits until a create shows it is in effect.
 * @param {{url: string, token: string, ca: string}} api
 * @param {string | undefined} webhookUrl
 * @param {string} caPem
 * @param {boolean} expectWarnings Forewarn's webhook warns on the benchmark's Deployment
 */
async function configure(api, webhookUrl, caPem, expectWarnings) {
  const configurations = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
  await apiRequest(api, 'DELETE', `${configurations}/${WEBHOOK_NAME}`);
  if (webhookUrl) {
    const created = await apiRequest(api, 'POST', configurations, webhookConfiguration(webhookUrl, caPem));
    if (created.status !== 201)
      throw new Error(`webhook registration failed: ${JSON.stringify(created.body)}`);
  }
  await new Promise((resolve) => setTimeout(resolve, CONFIGURATION_SETTLE_MS));
  const probe = await apiRequest(
    api,
    'POST',
    `/apis/apps/v1/namespaces/${NAMESPACE}/deployments?dryRun=All`,
    JSON.parse(deploymentText(`probe-${Date.now()}`)),
  );
  if (probe.status !== 201) throw new Error(`dry-run create failed: ${JSON.stringify(probe.body)}`);
  if (expectWarnings && probe.warnings.length === 0)
    throw new Error('Forewarn is registered but the create got no warnings: the webhook is not in effect');
  if (!expectWarnings && probe.warnings.length > 0)
    throw new Error(`warnings without Forewarn registered: ${probe.warnings.join(' | ')}`);
  return probe.warnings.length;
}

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
    nextBody: () => deploymentText(`web-${runId}-${connections}-${sequence++}`),
  };
  /** @type {CaseName[]} */
  const order = ['none', 'bare', 'forewarn'];
  /** @type {Record<CaseName, import('./lib/measure').LoadResult[]>} */
  const runs = { none: [], bare: [], forewarn: [] };
  let warnings = 0;
  for (const name of [...order, ...[...order].reverse()]) {
    const count = await configure(api, cases[name].webhookUrl, caPem, name === 'forewarn');
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
  const tools = toolsBinDir();
  if (!tools)
    return {
      skipped: `no e2e tools (kube-apiserver, etcd) in $FOREWARN_TOOLS_BIN or ${TOOLS_CACHE}; build them with test/e2e/provision/build-tools.sh`,
    };
  const env = {
    ...process.env,
    FOREWARN_TOOLS_BIN: tools.binDir,
    FOREWARN_E2E_CONTROLLER_MANAGER: '0',
    FOREWARN_E2E_OWNER_PID: String(process.pid),
    FOREWARN_E2E_READY_TIMEOUT: '180',
  };
  /** @type {import('./lib/processes').RunningProcess<keyof import('./lib/processes').ReadyInfo>[]} */
  const processes = [];
  let dataDir = '';
  try {
    const cluster = parseEnvFile(await clusterScript(['start'], env));
    dataDir = cluster.FOREWARN_E2E_DATA_DIR;
    const api = {
      url: cluster.FOREWARN_E2E_API_URL,
      token: readFileSync(cluster.FOREWARN_E2E_ADMIN_TOKEN_FILE, 'utf8').trim(),
      ca: readFileSync(cluster.FOREWARN_E2E_CA_FILE, 'utf8'),
    };
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
    return { kubernetesVersion: cluster.FOREWARN_E2E_KUBERNETES_VERSION, rows };
  } finally {
    await Promise.all(processes.map((running) => running.stop()));
    if (dataDir) await clusterScript(['stop', dataDir], env).catch((error) => console.error(error.message));
    tools.cleanup();
  }
}

module.exports = { runApiServerBenchmark };
