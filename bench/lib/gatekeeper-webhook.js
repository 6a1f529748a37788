// @ts-check
'use strict';

const { existsSync, readFileSync, writeFileSync } = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { parseAllDocuments } = require('yaml');
const {
  freePort,
  goModuleDirectory,
  kubectlFor,
  startPeerWebhook,
  temporaryDirectory,
} = require('./peer-webhook-process');

// Gatekeeper's real admission webhook (its manager, v3.23.1, built by tools/build-gatekeeper-webhook.sh)
// run out of cluster against the benchmark's API server, as ../shared/TOOLCHAIN.md measured it: its
// CRDs from the module's deploy/gatekeeper.yaml, `--operation=webhook --operation=generate` (generate
// makes the constraint CRDs from templates), certificates from a directory, no VAP generation.

const VERSION = process.env.FOREWARN_GATEKEEPER_VERSION || 'v3.23.1';
const MODULE = 'github.com/open-policy-agent/gatekeeper/v3';
const TOOLS_CACHE = '/var/cache/forewarn-e2e/tools';
const SYSTEM_NAMESPACE = 'gatekeeper-system';

/**
 * The cached manager binary, or why there is none.
 * @returns {{binary: string} | {missing: string}}
 */
function gatekeeperBinary() {
  const binary =
    process.env.FOREWARN_GATEKEEPER_MANAGER_BIN ||
    path.join(TOOLS_CACHE, `gatekeeper-manager-${VERSION}`, 'gatekeeper-manager');
  return existsSync(binary)
    ? { binary }
    : {
        missing: `Gatekeeper's manager is not cached (${binary}); build it with tools/build-gatekeeper-webhook.sh`,
      };
}

/** Gatekeeper's CustomResourceDefinitions, read from the module the Go proxy serves (never copied). */
function gatekeeperCrds() {
  const text = readFileSync(
    path.join(goModuleDirectory(MODULE, VERSION), 'deploy', 'gatekeeper.yaml'),
    'utf8',
  );
  return parseAllDocuments(text)
    .map((document) => document.toJSON())
    .filter((object) => object && object.kind === 'CustomResourceDefinition');
}

/** @param {number} port @returns {Promise<boolean>} */
function ready(port) {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/readyz', timeout: 2000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('error', () => resolve(false));
    request.on('timeout', () => request.destroy());
  });
}

/**
 * Installs Gatekeeper's CRDs, starts its webhook and waits until it is ready.
 * @param {{kubectlPath: string, kubeconfigPath: string}} cluster
 * @param {{certPem: string, keyPem: string}} certificate
 * @param {string} binary the manager (gatekeeperBinary)
 * @returns {Promise<{pid: number, url: string, stop: () => Promise<void>, kubectl: (args: string[], objects?: unknown[]) => Promise<string>}>}
 */
async function startGatekeeperWebhook(cluster, certificate, binary) {
  const run = kubectlFor(cluster);
  await run(
    ['apply', '-f', '-'],
    [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: SYSTEM_NAMESPACE } }, ...gatekeeperCrds()],
  );
  await run(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  const directory = temporaryDirectory('forewarn-bench-gatekeeper-');
  writeFileSync(path.join(directory, 'tls.crt'), certificate.certPem);
  writeFileSync(path.join(directory, 'tls.key'), certificate.keyPem);
  const [port, healthPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const { pid, stop } = await startPeerWebhook({
    name: "Gatekeeper's webhook",
    binary,
    args: [
      '--operation=webhook',
      '--operation=generate',
      `--port=${port}`,
      '--host=127.0.0.1',
      `--cert-dir=${directory}`,
      '--disable-cert-rotation',
      `--health-addr=127.0.0.1:${healthPort}`,
      `--metrics-addr=127.0.0.1:${metricsPort}`,
      '--enable-external-data=false',
      `--exempt-namespace=${SYSTEM_NAMESPACE}`,
      '--disable-opa-builtin={http.send}',
      '--debug-use-fake-pod',
      '--default-create-vap-for-templates=false',
      '--default-create-vap-binding-for-constraints=false',
      '--readiness-retries=3',
    ],
    env: { ...process.env, KUBECONFIG: cluster.kubeconfigPath, POD_NAMESPACE: SYSTEM_NAMESPACE },
    directory,
    isReady: () => ready(healthPort),
    readyTimeoutMs: 180_000,
  });
  return { pid, url: `https://127.0.0.1:${port}/v1/admit`, stop, kubectl: run };
}

/**
 * Waits for a CRD Gatekeeper creates for a template to be served.
 * @param {(args: string[]) => Promise<string>} kubectl
 * @param {string} crd
 */
async function waitForCrd(kubectl, crd) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const established = await kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=10s',
      `crd/${crd}`,
    ]).then(
      () => true,
      () => false,
    );
    if (established) return;
    if (Date.now() > deadline)
      throw new Error(`Gatekeeper did not create the constraint CRD ${crd} within 120 s`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

module.exports = { gatekeeperBinary, startGatekeeperWebhook, waitForCrd };
