// @ts-check
'use strict';

const { execFile, execFileSync, spawn } = require('node:child_process');
const { mkdtempSync, openSync, readFileSync, rmSync } = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

// What the peer benchmark needs to run another project's admission webhook (a Go binary of the tool
// cache) out of cluster: its module's files from the Go module cache, free loopback ports, kubectl
// against the benchmark's API server, and the process itself with its log in a temporary directory.

/**
 * The directory of a Go module the Go proxy serves (read in place from the module cache, never copied).
 * @param {string} module
 * @param {string} version
 * @returns {string}
 */
function goModuleDirectory(module, version) {
  const downloaded = JSON.parse(
    execFileSync('go', ['mod', 'download', '-json', `${module}@${version}`], {
      encoding: 'utf8',
      env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod' },
    }),
  );
  return downloaded.Dir;
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
 * @typedef {{kubectlPath: string, kubeconfigPath: string}} ClusterAccess
 * @typedef {(args: string[], objects?: unknown[]) => Promise<string>} Kubectl kubectl with `objects`
 *   sent as JSON lines on stdin; resolves with stdout
 */

/**
 * @param {ClusterAccess} cluster
 * @returns {Kubectl}
 */
function kubectlFor(cluster) {
  return (args, objects) =>
    new Promise((resolve, reject) => {
      const child = execFile(
        cluster.kubectlPath,
        ['--kubeconfig', cluster.kubeconfigPath, ...args],
        { maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) =>
          error
            ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr || error.message}`))
            : resolve(stdout),
      );
      if (objects) child.stdin?.end(objects.map((object) => JSON.stringify(object)).join('\n'));
    });
}

/**
 * Starts a peer's webhook binary (its output to `webhook.log` in `directory`) and waits until `isReady`
 * answers true; on a crash or after `readyTimeoutMs` it stops the process and throws with the log's tail.
 * `stop` ends the process (SIGTERM, SIGKILL after 10 s) and removes `directory`.
 * @param {{name: string, binary: string, args: string[], env: NodeJS.ProcessEnv, directory: string, isReady: () => Promise<boolean>, readyTimeoutMs: number}} options
 * @returns {Promise<{pid: number, stop: () => Promise<void>}>}
 */
async function startPeerWebhook({ name, binary, args, env, directory, isReady, readyTimeoutMs }) {
  const logPath = path.join(directory, 'webhook.log');
  const log = openSync(logPath, 'a');
  const child = spawn(binary, args, { env, stdio: ['ignore', log, log] });
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
  const deadline = Date.now() + readyTimeoutMs;
  while (!(await isReady().catch(() => false))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      const tail = readFileSync(logPath, 'utf8').slice(-3000);
      await stop();
      throw new Error(`${name} did not become ready within ${readyTimeoutMs / 1000} s:\n${tail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return { pid: /** @type {number} */ (child.pid), stop };
}

/** @param {string} prefix @returns {string} a new temporary directory */
function temporaryDirectory(prefix) {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

module.exports = { freePort, goModuleDirectory, kubectlFor, startPeerWebhook, temporaryDirectory };
