// @ts-check
'use strict';

// The receiving side of the watch benchmark. argv[2]: JSON `{"mode": "controller"|"raw",
// "kubeConfigYaml": ..., "url": ..., "token": ...}`.
// - controller: the real controller (runtime, ClusterSource with its reflectors, Ingestor, index,
//   HTTP app); a change counts as visible when the Ingestor has put it into the index, which is
//   what every `/resources/*` view reads.
// - raw: the baseline, one bare watch request on NetworkPolicies whose lines are parsed and dropped:
//   what the API server and the network cost before any controller work.

const http = require('node:http');
const { performance } = require('node:perf_hooks');
const { KubeConfig } = require('@kubernetes/client-node');
const { startController } = require('../../dist/services/controller/runtime');
const { parseControllerConfig } = require('../../dist/services/controller/config');
const { ClusterSource } = require('../../dist/services/controller/sources/cluster/cluster-source');
const { silentLogger } = require('../../dist/services/logging/logger');
const { z } = require('zod');
const { summarizeLatencies } = require('../lib/measure');
const { reportReady, serveCommands } = require('../lib/processes');

const CHANGED_AT = 'bench.forewarn.io/changed-at';
const settings = z
  .object({
    mode: z.enum(['controller', 'raw']),
    kubeConfigYaml: z.string(),
    url: z.string(),
    token: z.string(),
  })
  .parse(JSON.parse(process.argv[2]));
/** @type {number[]} */
let delays = [];

/** @typedef {import('../../dist/services/model/kubernetes').KubernetesObject} KubernetesObject */

/** @param {KubernetesObject | undefined} object */
function record(object) {
  const stamp = Number(object && object.metadata && object.metadata.annotations?.[CHANGED_AT]);
  // Stamp 0 marks the objects created before the run.
  if (stamp > 0) delays.push(performance.timeOrigin + performance.now() - stamp);
}

async function startControllerMode() {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(settings.kubeConfigYaml);
  const config = parseControllerConfig(['--port', '0', '--address', '127.0.0.1', '--mcp=false'], {});
  /** @type {import('../../dist/services/controller/runtime').ControllerOverrides['source']} */
  const source = (sink, registry) =>
    new ClusterSource({
      kubeConfig,
      registry,
      logger: silentLogger(),
      rescanIntervalMs: 10 * 60_000,
      sink: {
        upsert: (object) => {
          const adapter = sink.upsert(object);
          record(object);
          return adapter;
        },
        delete: (object) => sink.delete(object),
      },
    });
  const controller = await startController(config, silentLogger(), { source });
  return { port: controller.port, close: () => controller.close() };
}

function startRawMode() {
  const url = new URL(`${settings.url}/apis/networking.k8s.io/v1/networkpolicies?watch=true`);
  /** @type {import('node:http').ClientRequest} */
  let request;
  /** @type {Promise<void>} */
  const ready = new Promise((resolve, reject) => {
    request = http.get(url, { headers: { authorization: `Bearer ${settings.token}` } }, (response) => {
      let buffered = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => {
        buffered += chunk;
        let newline;
        while ((newline = buffered.indexOf('\n')) !== -1) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          // A watch event; record() reads the object's fields defensively, as KubernetesObject's are optional.
          if (line) record(/** @type {{object?: KubernetesObject}} */ (JSON.parse(line)).object);
        }
      });
      resolve();
    });
    request.on('error', reject);
  });
  return ready.then(() => ({ port: 0, close: async () => request.destroy() }));
}

async function main() {
  const running = settings.mode === 'controller' ? await startControllerMode() : await startRawMode();
  serveCommands({
    'take-delays': () => {
      const taken = delays;
      delays = [];
      return { received: taken.length, delayMs: summarizeLatencies(taken) };
    },
    received: () => delays.length,
  });
  process.on('SIGTERM', () => running.close().then(() => process.exit(0)));
  reportReady('servers/watch-client.js', { port: running.port });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
