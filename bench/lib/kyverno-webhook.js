// @ts-check
'use strict';

const { existsSync, readdirSync, readFileSync } = require('node:fs');
const https = require('node:https');
const path = require('node:path');
const { parseAllDocuments } = require('yaml');
const {
  freePort,
  goModuleDirectory,
  kubectlFor,
  startPeerWebhook,
  temporaryDirectory,
} = require('./peer-webhook-process');

// Kyverno's real admission controller (v1.19.1, package ./cmd/kyverno, built by
// tools/build-kyverno-webhook.sh) run out of cluster against the benchmark's API server, as
// ../shared/TOOLCHAIN.md measured it: its CRDs from the module's config/crds, the chart's names for its
// namespace, Service and certificate secrets, `--serverIP` so that it registers its webhooks by URL on
// loopback. It makes its own certificates and registers its own webhooks; the benchmark keeps those
// off the measured namespace (its ConfigMap's `webhooks` namespaceSelector matches a label no namespace
// carries) and registers Kyverno's validate path the same way as every other case, so that each
// webhook is called under one registration. What Kyverno registers itself is read back and reported.

const VERSION = process.env.FOREWARN_KYVERNO_VERSION || 'v1.19.1';
const MODULE = 'github.com/kyverno/kyverno';
const TOOLS_CACHE = '/var/cache/forewarn-e2e/tools';
const SYSTEM_NAMESPACE = 'kyverno';
const SERVICE_NAME = 'kyverno-svc';
const CONFIG_MAP = 'kyverno';
const METRICS_CONFIG_MAP = 'kyverno-metrics';
/** Kyverno's own resource webhooks go only to namespaces with this label, which none has. */
const OWN_WEBHOOKS_LABEL = 'bench.forewarn.io/kyverno-own-webhooks';
const POLICY_NAME = 'require-owner-label';
const CRD_FOLDERS = ['kyverno', 'policyreport', 'reports', 'policies.kyverno.io'];
const POLICY_WEBHOOK_CONFIGURATION = 'kyverno-policy-validating-webhook-cfg';
const RESOURCE_WEBHOOK_CONFIGURATION = 'kyverno-resource-validating-webhook-cfg';
const RESOURCE_MUTATING_CONFIGURATION = 'kyverno-resource-mutating-webhook-cfg';
const READY_TIMEOUT_MS = 240_000;
/**
 * The chart omits PolicyApplied and PolicySkipped events and keeps PolicyViolation: then Kyverno writes
 * four Events per failing create (two on the policy, two on the Deployment; measured), work no other
 * case asks of the API server and which drains into the next case. The benchmark omits them too unless
 * FOREWARN_BENCH_KYVERNO_EVENTS=1 asks for the chart's default.
 */
const KEEPS_VIOLATION_EVENTS = process.env.FOREWARN_BENCH_KYVERNO_EVENTS === '1';
const OMITTED_EVENTS = KEEPS_VIOLATION_EVENTS
  ? 'PolicyApplied,PolicySkipped'
  : 'PolicyApplied,PolicySkipped,PolicyViolation';

/**
 * The cached admission controller binary, or why there is none.
 * @returns {{binary: string} | {missing: string}}
 */
function kyvernoWebhookBinary() {
  const binary =
    process.env.FOREWARN_KYVERNO_WEBHOOK_BIN ||
    path.join(TOOLS_CACHE, `kyverno-webhook-${VERSION}`, 'kyverno-webhook');
  return existsSync(binary)
    ? { binary }
    : {
        missing: `Kyverno's admission controller is not cached (${binary}); build it with tools/build-kyverno-webhook.sh`,
      };
}

/** Kyverno's CustomResourceDefinitions, read from the module the Go proxy serves (never copied). */
function kyvernoCrds() {
  const crds = path.join(goModuleDirectory(MODULE, VERSION), 'config', 'crds');
  return CRD_FOLDERS.flatMap((folder) =>
    readdirSync(path.join(crds, folder))
      .filter((file) => file.endsWith('.yaml'))
      .flatMap((file) =>
        parseAllDocuments(readFileSync(path.join(crds, folder, file), 'utf8')).map((document) =>
          document.toJSON(),
        ),
      )
      .filter((object) => object && object.kind === 'CustomResourceDefinition'),
  );
}

/** Kyverno's namespace and its two ConfigMaps (the chart's names), its own webhooks steered away. */
function kyvernoSystemObjects() {
  const metadata = (/** @type {string} */ name) => ({ name, namespace: SYSTEM_NAMESPACE });
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SYSTEM_NAMESPACE } },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: metadata(CONFIG_MAP),
      data: {
        webhooks: JSON.stringify({ namespaceSelector: { matchLabels: { [OWN_WEBHOOKS_LABEL]: 'true' } } }),
      },
    },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: metadata(METRICS_CONFIG_MAP), data: {} },
  ];
}

/**
 * The peers' one policy as a Kyverno ClusterPolicy: Deployments of `namespace` need an `owner` label;
 * Audit with emitWarning (Kyverno evaluates it during the admission and answers with a warning, the
 * way Gatekeeper's `warn` does); failurePolicy Ignore, like every registration of the benchmark.
 * @param {string} namespace
 */
function ownerPolicy(namespace) {
  return {
    apiVersion: 'kyverno.io/v1',
    kind: 'ClusterPolicy',
    metadata: { name: POLICY_NAME },
    spec: {
      background: false,
      emitWarning: true,
      failurePolicy: 'Ignore',
      rules: [
        {
          name: 'check-owner',
          match: { any: [{ resources: { kinds: ['Deployment'], namespaces: [namespace] } }] },
          validate: {
            failureAction: 'Audit',
            message: 'you must provide labels: owner',
            pattern: { metadata: { labels: { owner: '?*' } } },
          },
        },
      ],
    },
  };
}

/**
 * GETs Kyverno's readiness path over TLS checked against its own CA for 127.0.0.1, as the API server
 * will call it.
 * @param {number} port
 * @param {string} caPem
 * @returns {Promise<boolean>}
 */
function ready(port, caPem) {
  return new Promise((resolve) => {
    const request = https.get(
      { host: '127.0.0.1', port, path: '/health/readiness', ca: caPem, timeout: 2000 },
      (response) => {
        response.resume();
        resolve(response.statusCode === 200);
      },
    );
    request.on('error', () => resolve(false));
    request.on('timeout', () => request.destroy());
  });
}

/**
 * @typedef {{
 *   name: string,
 *   clientConfig?: {url?: string, caBundle?: string},
 *   rules?: {apiGroups?: string[], apiVersions?: string[], resources?: string[], operations?: string[]}[],
 *   failurePolicy?: string, timeoutSeconds?: number, sideEffects?: string, matchPolicy?: string,
 *   namespaceSelector?: unknown, objectSelector?: unknown, matchConditions?: unknown[]
 * }} RegisteredWebhook
 */

/**
 * One webhook configuration of Kyverno's, or undefined while it does not exist.
 * @param {import('./peer-webhook-process').Kubectl} kubectl
 * @param {'validatingwebhookconfiguration' | 'mutatingwebhookconfiguration'} kind
 * @param {string} name
 * @returns {Promise<RegisteredWebhook[] | undefined>}
 */
async function registeredWebhooks(kubectl, kind, name) {
  const text = await kubectl(['get', kind, name, '-o', 'json', '--ignore-not-found']);
  return text.trim() ? (JSON.parse(text).webhooks ?? []) : undefined;
}

/** @param {RegisteredWebhook} webhook */
function coversDeployments(webhook) {
  return (webhook.rules ?? []).some(
    (rule) =>
      rule.apiGroups?.includes('apps') && rule.resources?.some((resource) => resource === 'deployments'),
  );
}

/**
 * One line per webhook Kyverno registered itself for Deployments: how it differs from the benchmark's.
 * @param {string} kind
 * @param {RegisteredWebhook} webhook
 */
function describeOwnRegistration(kind, webhook) {
  const rules = (webhook.rules ?? [])
    .filter((rule) => rule.resources?.includes('deployments'))
    .map(
      (rule) =>
        `${(rule.operations ?? []).join('/')} ${rule.apiGroups?.join(',')}/${rule.apiVersions?.join(',')} deployments`,
    )
    .join('; ');
  const urlPath = webhook.clientConfig?.url ? new URL(webhook.clientConfig.url).pathname : 'a Service';
  return (
    `Kyverno registers itself (${kind}) ${webhook.name} at ${urlPath}: ${rules}, failurePolicy ${webhook.failurePolicy}, ` +
    `timeout ${webhook.timeoutSeconds} s, sideEffects ${webhook.sideEffects}, matchPolicy ${webhook.matchPolicy}` +
    `${webhook.matchConditions?.length ? `, ${webhook.matchConditions.length} matchConditions` : ''}`
  );
}

/**
 * Waits (up to the budget) for `probe` to return a value.
 * @template T
 * @param {string} what
 * @param {() => Promise<T | undefined>} probe
 * @param {number} budgetMs
 * @returns {Promise<T>}
 */
async function waitFor(what, probe, budgetMs) {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Kyverno: ${what} within ${budgetMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** The chart's environment of the admission controller, for the names it reads at start. */
const KYVERNO_ENVIRONMENT = {
  KYVERNO_NAMESPACE: SYSTEM_NAMESPACE,
  KYVERNO_SERVICEACCOUNT_NAME: 'kyverno-admission-controller',
  KYVERNO_DEPLOYMENT: 'kyverno-admission-controller',
  KYVERNO_POD_NAME: 'kyverno-admission-controller-bench',
  KYVERNO_SVC: SERVICE_NAME,
  INIT_CONFIG: CONFIG_MAP,
  METRICS_CONFIG: METRICS_CONFIG_MAP,
};

/**
 * The chart's arguments (certificate secrets), out of cluster on loopback, the events of OMITTED_EVENTS.
 * @param {{port: number, metricsPort: number, kubeconfigPath: string}} options
 */
function kyvernoArguments({ port, metricsPort, kubeconfigPath }) {
  return [
    `--serverIP=127.0.0.1:${port}`,
    '--webhookServerHost=127.0.0.1',
    `--webhookServerPort=${port}`,
    `--caSecretName=${SERVICE_NAME}.${SYSTEM_NAMESPACE}.svc.kyverno-tls-ca`,
    `--tlsSecretName=${SERVICE_NAME}.${SYSTEM_NAMESPACE}.svc.kyverno-tls-pair`,
    `--omitEvents=${OMITTED_EVENTS}`,
    '--webhookTimeout=5',
    '--metricsHost=127.0.0.1',
    `--metricsPort=${metricsPort}`,
    // controller-runtime's own metrics server would bind :8080 on every interface.
    '--controllerRuntimeMetricsAddress=0',
    `--kubeconfig=${kubeconfigPath}`,
  ];
}

/**
 * The webhooks Kyverno registered itself for Deployments, once its validating one is there.
 * @param {import('./peer-webhook-process').Kubectl} kubectl
 */
async function ownWebhooksForDeployments(kubectl) {
  const validating = await waitFor(
    `no ${RESOURCE_WEBHOOK_CONFIGURATION} for Deployments`,
    async () => {
      const webhooks = await registeredWebhooks(
        kubectl,
        'validatingwebhookconfiguration',
        RESOURCE_WEBHOOK_CONFIGURATION,
      );
      const forDeployments = webhooks?.filter(coversDeployments);
      return forDeployments?.length ? forDeployments : undefined;
    },
    120_000,
  );
  const mutating = (
    (await registeredWebhooks(kubectl, 'mutatingwebhookconfiguration', RESOURCE_MUTATING_CONFIGURATION)) ?? []
  ).filter(coversDeployments);
  return { validating, mutating };
}

/**
 * Installs Kyverno's CRDs and configuration, starts its admission controller, waits until it serves
 * with its own certificate, puts the owner policy in place and waits until Kyverno has registered
 * its webhook for it. `url` is the path Kyverno registered for the policy, on its loopback port;
 * `notes` say which events it omits and what it registered itself for Deployments.
 * @param {import('./peer-webhook-process').ClusterAccess} cluster
 * @param {string} binary the admission controller (kyvernoWebhookBinary)
 * @param {string} namespace the namespace whose Deployments the policy covers
 * @returns {Promise<{pid: number, url: string, caPem: string, notes: string[], stop: () => Promise<void>}>}
 */
async function startKyvernoWebhook(cluster, binary, namespace) {
  const kubectl = kubectlFor(cluster);
  await kubectl(['apply', '--server-side', '-f', '-'], [...kyvernoSystemObjects(), ...kyvernoCrds()]);
  await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  const [port, metricsPort] = [await freePort(), await freePort()];
  /** Kyverno's CA as it registered it, once it has. */
  let caPem = '';
  const { pid, stop } = await startPeerWebhook({
    name: "Kyverno's admission controller",
    binary,
    args: kyvernoArguments({ port, metricsPort, kubeconfigPath: cluster.kubeconfigPath }),
    env: { ...process.env, ...KYVERNO_ENVIRONMENT },
    directory: temporaryDirectory('forewarn-bench-kyverno-'),
    isReady: async () => {
      const policyWebhooks = await registeredWebhooks(
        kubectl,
        'validatingwebhookconfiguration',
        POLICY_WEBHOOK_CONFIGURATION,
      );
      const caBundle = policyWebhooks?.[0]?.clientConfig?.caBundle;
      if (!caBundle) return false;
      caPem = Buffer.from(caBundle, 'base64').toString('utf8');
      return ready(port, caPem);
    },
    readyTimeoutMs: READY_TIMEOUT_MS,
  });
  try {
    await kubectl(['apply', '-f', '-'], [ownerPolicy(namespace)]);
    await kubectl(['wait', '--for=condition=Ready', '--timeout=120s', `clusterpolicy/${POLICY_NAME}`]);
    const own = await ownWebhooksForDeployments(kubectl);
    const registeredUrl = own.validating[0].clientConfig?.url;
    if (!registeredUrl) throw new Error('Kyverno registered its webhook without a URL (is --serverIP set?)');
    return {
      pid,
      url: `https://127.0.0.1:${port}${new URL(registeredUrl).pathname}`,
      caPem,
      notes: [
        `Kyverno runs with --omitEvents=${OMITTED_EVENTS}${KEEPS_VIOLATION_EVENTS ? " (the chart's default)" : ' (the chart keeps PolicyViolation; FOREWARN_BENCH_KYVERNO_EVENTS=1 does too)'}`,
        ...own.validating.map((webhook) => describeOwnRegistration('validating', webhook)),
        ...own.mutating.map((webhook) => describeOwnRegistration('mutating', webhook)),
      ],
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

module.exports = { kyvernoWebhookBinary, startKyvernoWebhook, POLICY_NAME };
