// @ts-check
'use strict';

const { fork } = require('node:child_process');
const path = require('node:path');
const { CONTROLLER_NODE_FLAGS, WEBHOOK_NODE_FLAGS } = require('../../dist/infra/node-flags');

// The benchmarks' server processes: started apart from the load generator, each tells its parent
// when it listens and answers the parent's commands over IPC.

/** @typedef {import('./measure').LatencySummary} LatencySummary */

/**
 * What each bench server tells its parent once it listens (`info` of startProcess): one map that the
 * server (reportReady) and the benchmark reading it are both checked against.
 * @typedef {{
 *   'servers/controller.js': {port: number, constraints: number},
 *   'servers/webhook.js': {port: number},
 *   'servers/bare-https.js': {port: number},
 *   'servers/bare-express.js': {port: number},
 *   'servers/bare-backend.js': {port: number},
 *   'servers/kubernetes-api.js': {kubeConfigYaml: string, url: string, token: string},
 *   'servers/watch-client.js': {port: number},
 *   'servers/cluster-api.js': {kubeConfigYaml: string, url: string, token: string},
 *   'servers/cluster-controller.js': {port: number, readyMs: number, constraints: number},
 *   'servers/risks-controller.js': {port: number, constraints: number},
 * }} ReadyInfo
 */

/**
 * The commands a benchmark sends to its server processes and what each answers: one map that
 * serveCommands (in the server) and RunningProcess.request (in the benchmark) are both checked against.
 * @typedef {{
 *   'cpu-usage': {command: object, result: NodeJS.CpuUsage},
 *   'loop-watch-start': {command: object, result: null},
 *   'loop-watch-take': {command: object, result: import('./loop-watch').LoopWatchFigures},
 *   'allocation-sampling-start': {command: {intervalBytes: number}, result: null},
 *   'allocation-sampling-take': {command: {file: string}, result: string},
 *   'query-counts': {command: object, result: {ok: number, failed: number, lastFailure: string | null}},
 *   'timing-start': {command: object, result: null},
 *   'timing-take': {command: object, result: {reviews: number[], queries: number[], newConnections: number, batchedChecks?: number[], loop: import('./loop-watch').LoopWatchFigures}},
 *   received: {command: object, result: number},
 *   'take-delays': {command: object, result: {received: number, delayMs: LatencySummary}},
 *   truth: {command: object, result: {namespace: string, name: string, severity: string}[]},
 *   'run-changes': {command: {rate: number, durationMs: number}, result: {changes: number, seconds: number}},
 *   'heap-snapshot': {command: {file: string}, result: string},
 *   memory: {command: object, result: {rssBytes: number, peakRssBytes: number, heapUsedBytes: number, heapTotalBytes: number, externalBytes: number, constraints: number}},
 *   'risk-evaluation': {command: object, result: {cpuSeconds: number, secondsSinceReady: number, workloads: number, evaluations: number, evaluated: boolean}},
 *   'risk-status': {command: object, result: {workloads: number, pending: number, evaluations: number, evaluated: boolean}},
 *   reevaluate: {command: {seconds: number}, result: {rounds: number, workloads: number, seconds: number, cpuSeconds: number}},
 *   'risk-policy': {command: {present: boolean}, result: {atEpochMs: number, workloads: number}},
 *   'rejected-workloads': {command: object, result: number},
 *   'await-risks': {command: {rejected: number, timeoutMs: number}, result: {atEpochMs: number, rejected: number, cpu: NodeJS.CpuUsage}},
 * }} Commands
 */

/**
 * @typedef {{[Type in keyof Commands]?: (command: Commands[Type]['command']) => Commands[Type]['result'] | Promise<Commands[Type]['result']>}} CommandHandlers
 */

/**
 * A bench server process started by startProcess.
 * @template {keyof ReadyInfo} Script
 * @typedef {object} RunningProcess
 * @property {import('node:child_process').ChildProcess} child
 * @property {ReadyInfo[Script] & {type: 'ready'}} info
 * @property {<Type extends keyof Commands>(command: {type: Type} & Commands[Type]['command']) => Promise<Commands[Type]['result']>} request
 * @property {() => Promise<void>} stop
 */

// Forewarn's own processes (in this checkout's bench/servers or another checkout's) run with the
// Node flags the image gives them (infra/node-flags.ts), before the caller's own; the bare baselines
// and stand-ins for other services run with Node's defaults.
/** @type {ReadonlyMap<string, readonly string[]>} */
const DEPLOYED_PROCESS_FLAGS = new Map([
  ['controller.js', CONTROLLER_NODE_FLAGS],
  ['cluster-controller.js', CONTROLLER_NODE_FLAGS],
  ['risks-controller.js', CONTROLLER_NODE_FLAGS],
  ['webhook.js', WEBHOOK_NODE_FLAGS],
]);

/**
 * Starts a bench server (`script` relative to bench/, named in ReadyInfo) in its own process and
 * waits for its `{type: 'ready', ...}` message. Servers run apart from the load generator so each
 * has an event loop of its own, as in a deployment.
 * @template {keyof ReadyInfo} Script
 * @param {Script} script
 * @param {string[]} [args]
 * `nodeFlags` replaces the deployed processes' own Node flags (infra/node-flags.ts), for a run that
 * compares flags; `execArgv` is added to them.
 * @param {{execArgv?: string[], nodeFlags?: readonly string[], timeoutMs?: number}} [options]
 * @returns {Promise<RunningProcess<Script>>}
 */
function startProcess(script, args = [], { execArgv = [], nodeFlags, timeoutMs = 60_000 } = {}) {
  return new Promise((resolve, reject) => {
    const ownFlags = DEPLOYED_PROCESS_FLAGS.get(path.basename(script));
    const deployedFlags = ownFlags ? (nodeFlags ?? ownFlags) : [];
    const child = fork(path.resolve(__dirname, '..', script), args, {
      execArgv: [...deployedFlags, ...execArgv],
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
        // The server sent it through reportReady, checked against the same ReadyInfo.
        info: /** @type {ReadyInfo[Script] & {type: 'ready'}} */ (message),
        request: (command) => requestFromProcess(child, command),
        stop: () => stopProcess(child),
      });
    });
  });
}

/**
 * Sends a command to a bench process and waits for the answer with the same `id`.
 * @template {keyof Commands} Type
 * @param {import('node:child_process').ChildProcess} child
 * @param {{type: Type} & Commands[Type]['command']} command
 * @returns {Promise<Commands[Type]['result']>}
 */
function requestFromProcess(child, command) {
  const id = `${Date.now()}-${Math.random()}`;
  return new Promise((resolve, reject) => {
    /** @param {unknown} message */
    const onMessage = (message) => {
      if (!isReply(message) || message.id !== id) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (message.error) reject(new Error(message.error));
      // The server answered through serveCommands, whose handlers are checked against Commands.
      else resolve(/** @type {Commands[Type]['result']} */ (message.result));
    };
    /** @param {number | null} code */
    const onExit = (code) => {
      child.off('message', onMessage);
      reject(new Error(`process exited with ${code} while answering ${command.type}`));
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.send({ ...command, id });
  });
}

/**
 * @param {unknown} message
 * @returns {message is {id: string}}
 */
function hasId(message) {
  return typeof message === 'object' && message !== null && 'id' in message && typeof message.id === 'string';
}

/**
 * An answer of serveCommands: `result`, or `error` as text.
 * @param {unknown} message
 * @returns {message is {id: string, result?: unknown, error?: string}}
 */
function isReply(message) {
  return hasId(message) && (!('error' in message) || typeof message.error === 'string');
}

/**
 * Serves `{type, id}` commands from the parent with `handlers[type]`.
 * @param {CommandHandlers} handlers
 */
function serveCommands(handlers) {
  /** @type {Record<string, ((command: never) => unknown) | undefined>} */
  const handlersByType = handlers;
  process.on('message', (message) => {
    if (!isCommand(message)) return;
    const { type, id } = message;
    const handler = handlersByType[type];
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown command ${type}`);
        // requestFromProcess built this command for its type, checked against the same Commands map.
        return handler(/** @type {never} */ (message));
      })
      .then(
        (result) => sendToParent({ id, result }),
        (error) => sendToParent({ id, error: (error instanceof Error && error.stack) || String(error) }),
      );
  });
  // The parent going away ends the child: no stray servers after an interrupted run.
  process.on('disconnect', () => process.exit(0));
}

/**
 * @param {unknown} message
 * @returns {message is {type: string, id: string}}
 */
function isCommand(message) {
  return hasId(message) && 'type' in message && typeof message.type === 'string';
}

/**
 * Tells the parent that this server listens (startProcess resolves with `info`).
 * @template {keyof ReadyInfo} Script
 * @param {Script} _script the server's own file, naming the ready message it owes (ReadyInfo)
 * @param {ReadyInfo[Script]} info
 */
function reportReady(_script, info) {
  sendToParent({ type: 'ready', ...info });
}

/**
 * The port a server listens on, once it listens.
 * @param {import('node:net').Server} server
 */
function listeningPort(server) {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`not listening on a port: ${address}`);
  return address.port;
}

/** @param {object} message */
function sendToParent(message) {
  if (!process.send) throw new Error('a bench server runs as a child of a benchmark (startProcess)');
  process.send(message);
}

/**
 * @param {import('node:child_process').ChildProcess} child
 * @returns {Promise<void>}
 */
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

module.exports = { startProcess, serveCommands, reportReady, listeningPort };
