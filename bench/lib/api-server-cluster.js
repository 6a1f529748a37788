// @ts-check
'use strict';

// The real kube-apiserver of the e2e tools for the benchmarks that measure what a developer waits for
// (bench/apiserver.js, bench/peers.js): the binaries, the throw-away cluster (test/e2e/provision/
// cluster.sh), JSON requests with the admin token, and one webhook registration at a time.

const { execFile } = require('node:child_process');
const { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } = require('node:fs');
const https = require('node:https');
const os = require('node:os');
const path = require('node:path');

const TOOLS_CACHE = '/var/cache/forewarn-e2e/tools';
const CLUSTER_SCRIPT = path.join(__dirname, '..', '..', 'test', 'e2e', 'provision', 'cluster.sh');
const WEBHOOK_NAME = 'forewarn-bench';
/** The API server reads webhook configurations through an informer: give a change time to land. */
const CONFIGURATION_SETTLE_MS = 3000;

/** @typedef {{url: string, token: string, ca: string}} ApiAccess */

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
 * @param {string} namespace
 * @param {Record<string, string>} [extraLabels] labels of the Deployment only (not its selector)
 */
function deploymentText(name, namespace, extraLabels = {}) {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { app: 'web', tier: 'frontend', instance: name, ...extraLabels } },
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
 * @param {string} namespace the only namespace whose creates it reviews
 */
function webhookConfiguration(url, caPem, namespace) {
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
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
        failurePolicy: 'Ignore',
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        timeoutSeconds: 5,
      },
    ],
  };
}

/**
 * Registers one webhook (or none, when `webhookUrl` is undefined) for `namespace` and waits until a
 * dry-run create shows it is in effect: a warning matches `expectWarning` and none `forbidWarning`, or
 * there are no warnings at all.
 * @param {ApiAccess} api
 * @param {{webhookUrl?: string, caPem: string, namespace: string, expectWarning?: RegExp, forbidWarning?: RegExp, extraLabels?: Record<string, string>}} registration
 * @returns {Promise<number>} the warnings of the probe create
 */
async function configure(api, { webhookUrl, caPem, namespace, expectWarning, forbidWarning, extraLabels }) {
  const configurations = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
  await apiRequest(api, 'DELETE', `${configurations}/${WEBHOOK_NAME}`);
  if (webhookUrl) {
    const created = await apiRequest(
      api,
      'POST',
      configurations,
      webhookConfiguration(webhookUrl, caPem, namespace),
    );
    if (created.status !== 201)
      throw new Error(`webhook registration failed: ${JSON.stringify(created.body)}`);
  }
  const deadline = Date.now() + 60_000;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, CONFIGURATION_SETTLE_MS));
    const probe = await apiRequest(
      api,
      'POST',
      `/apis/apps/v1/namespaces/${namespace}/deployments?dryRun=All`,
      JSON.parse(deploymentText(`probe-${Date.now()}`, namespace, extraLabels)),
    );
    if (probe.status !== 201) throw new Error(`dry-run create failed: ${JSON.stringify(probe.body)}`);
    const forbidden = forbidWarning && probe.warnings.some((warning) => forbidWarning.test(warning));
    const inEffect = expectWarning
      ? probe.warnings.some((warning) => expectWarning.test(warning)) && !forbidden
      : probe.warnings.length === 0;
    if (inEffect) return probe.warnings.length;
    if (Date.now() > deadline)
      throw new Error(
        expectWarning
          ? `the webhook at ${webhookUrl} is registered but no warning matches ${expectWarning}: ${probe.warnings.join(' | ')}`
          : `warnings without a webhook registered: ${probe.warnings.join(' | ')}`,
      );
  }
}

/**
 * Starts etcd and kube-apiserver (no controller-manager) from the e2e tools; undefined when they are
 * not built. `stop` stops them and removes the data.
 * @returns {Promise<{api: ApiAccess, kubernetesVersion: string, kubeconfigPath: string, kubectlPath: string, stop: () => Promise<void>} | undefined>}
 */
async function startApiServer() {
  const tools = toolsBinDir();
  if (!tools) return undefined;
  const env = {
    ...process.env,
    FOREWARN_TOOLS_BIN: tools.binDir,
    FOREWARN_E2E_CONTROLLER_MANAGER: '0',
    FOREWARN_E2E_OWNER_PID: String(process.pid),
    FOREWARN_E2E_READY_TIMEOUT: '180',
  };
  let cluster;
  try {
    cluster = parseEnvFile(await clusterScript(['start'], env));
  } catch (error) {
    tools.cleanup();
    throw error;
  }
  const dataDir = cluster.FOREWARN_E2E_DATA_DIR;
  return {
    api: {
      url: cluster.FOREWARN_E2E_API_URL,
      token: readFileSync(cluster.FOREWARN_E2E_ADMIN_TOKEN_FILE, 'utf8').trim(),
      ca: readFileSync(cluster.FOREWARN_E2E_CA_FILE, 'utf8'),
    },
    kubernetesVersion: cluster.FOREWARN_E2E_KUBERNETES_VERSION,
    kubeconfigPath: cluster.KUBECONFIG,
    kubectlPath: cluster.FOREWARN_E2E_KUBECTL,
    stop: async () => {
      await clusterScript(['stop', dataDir], env).catch((error) => console.error(error.message));
      tools.cleanup();
    },
  };
}

const TOOLS_MISSING = `no e2e tools (kube-apiserver, etcd) in $FOREWARN_TOOLS_BIN or ${TOOLS_CACHE}; build them with test/e2e/provision/build-tools.sh`;

module.exports = { TOOLS_CACHE, TOOLS_MISSING, apiRequest, configure, deploymentText, startApiServer };
