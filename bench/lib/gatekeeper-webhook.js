// @ts-check
'use strict';

const { execFile, execFileSync, spawn } = require('node:child_process');
const { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { parseAllDocuments } = require('yaml');

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
  const module = JSON.parse(
    execFileSync('go', ['mod', 'download', '-json', `${MODULE}@${VERSION}`], {
      encoding: 'utf8',
      env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod' },
    }),
  );
  const text = readFileSync(path.join(module.Dir, 'deploy', 'gatekeeper.yaml'), 'utf8');
  return parseAllDocuments(text)
    .map((document) => document.toJSON())
    .filter((object) => object && object.kind === 'CustomResourceDefinition');
}

/** @returns {Promise<number>} a port free on loopback now */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * @param {{kubectlPath: string, kubeconfigPath: string}} cluster
 * @param {string[]} args
 * @param {unknown[]} [objects] sent as JSON lines on stdin
 * @returns {Promise<string>}
 */
function kubectl(cluster, args, objects) {
  return new Promise((resolve, reject) => {
    const child = execFile(
      cluster.kubectlPath,
      ['--kubeconfig', cluster.kubeconfigPath, ...args],
      { maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr || error.message}`)) : resolve(stdout),
    );
    if (objects) child.stdin?.end(objects.map((object) => JSON.stringify(object)).join('\n'));
  });
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
  /** @param {string[]} args @param {unknown[]} [objects] */
  const run = (args, objects) => kubectl(cluster, args, objects);
  await run(
    ['apply', '-f', '-'],
    [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: SYSTEM_NAMESPACE } }, ...gatekeeperCrds()],
  );
  await run(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  const directory = mkdtempSync(path.join(os.tmpdir(), 'forewarn-bench-gatekeeper-'));
  writeFileSync(path.join(directory, 'tls.crt'), certificate.certPem);
  writeFileSync(path.join(directory, 'tls.key'), certificate.keyPem);
  const [port, healthPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const log = openSync(path.join(directory, 'manager.log'), 'a');
  const child = spawn(
    binary,
    [
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
    {
      env: { ...process.env, KUBECONFIG: cluster.kubeconfigPath, POD_NAMESPACE: SYSTEM_NAMESPACE },
      stdio: ['ignore', log, log],
    },
  );
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(directory, { recursive: true, force: true });
  };
  const deadline = Date.now() + 180_000;
  while (!(await ready(healthPort))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      const tail = readFileSync(path.join(directory, 'manager.log'), 'utf8').slice(-3000);
      await stop();
      throw new Error(`Gatekeeper's webhook did not become ready:\n${tail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return {
    pid: /** @type {number} */ (child.pid),
    url: `https://127.0.0.1:${port}/v1/admit`,
    stop,
    kubectl: run,
  };
}

module.exports = { gatekeeperBinary, startGatekeeperWebhook };
