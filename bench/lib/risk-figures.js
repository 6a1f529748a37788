// @ts-check
'use strict';

// The workloads-at-risk figures of issue 35, measured on a running bench controller and (at cluster
// scale) its API server: how long one policy change touching many workloads takes to be reflected,
// and the admission p99 while the controller re-evaluates every workload, against at rest.

const os = require('node:os');
const { loadTest, median } = require('./measure');
const { WORKLOAD_LABELS } = require('./cluster-objects');

/**
 * Admission checks of distinct Deployments spread over the namespaces (the memo answers none).
 * @param {number} port
 * @param {number} namespaces
 * @param {string} [namespacePrefix]
 */
function admissionSide(port, namespaces, namespacePrefix = 'bench-') {
  let sequence = 0;
  return {
    url: `http://127.0.0.1:${port}/api/v1/admission-check`,
    method: /** @type {const} */ ('POST'),
    headers: { 'content-type': 'application/json' },
    nextBody: () =>
      JSON.stringify({
        operation: 'CREATE',
        object: {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: {
            name: `web-${sequence++}`,
            namespace: `${namespacePrefix}${sequence % namespaces}`,
            labels: WORKLOAD_LABELS,
          },
          spec: {
            replicas: 2,
            selector: { matchLabels: WORKLOAD_LABELS },
            template: {
              metadata: { labels: WORKLOAD_LABELS },
              spec: { containers: [{ name: 'web', image: `registry.example.com/web:${sequence}` }] },
            },
          },
        },
      }),
  };
}

/**
 * @typedef {object} ControllerCommands
 * @property {(command: {type: 'reevaluate', seconds: number}) => Promise<{rounds: number, workloads: number, seconds: number, cpuSeconds: number}>} reevaluate
 */

/**
 * Admission p99 at rest and during back-to-back full re-evaluations of every workload, in
 * palindromic order (rest, busy, busy, rest, twice) so the shared machine's drift hits both alike;
 * each side's p99 is the median of its runs. Busy runs start the re-evaluation just before the load.
 * @param {{request: import('./processes').RunningProcess<'servers/cluster-controller.js'>['request']}} controller
 * @param {ReturnType<typeof admissionSide>} side
 * @param {{connections: number, durationSeconds: number}} options
 */
async function admissionDuringReevaluation(controller, side, { connections, durationSeconds }) {
  // Both sides warmed up: the requests (JIT, the namespaces' caches) and a full re-evaluation (the
  // first busy run was the slowest of every run without it: its caches rebuilt after the policy change).
  await loadTest({ ...side, connections, durationSeconds: 1 });
  await controller.request({ type: 'reevaluate', seconds: 0 });
  /** @type {{rest: number[], busy: number[]}} */
  const p99 = { rest: [], busy: [] };
  /** @type {Array<{rounds: number, workloads: number, seconds: number, cpuSeconds: number}>} */
  const reevaluations = [];
  for (const state of /** @type {const} */ ([
    'rest',
    'busy',
    'busy',
    'rest',
    'rest',
    'busy',
    'busy',
    'rest',
  ])) {
    const busy =
      state === 'busy'
        ? controller.request({ type: 'reevaluate', seconds: durationSeconds + 0.5 })
        : undefined;
    const result = await loadTest({ ...side, connections, durationSeconds });
    if (result.failures + result.errors + result.non2xx > 0) throw new Error(`${state}: failed requests`);
    p99[state].push(result.latencyMs.p99);
    if (busy) reevaluations.push(await busy);
  }
  const restP99Ms = median(p99.rest);
  const busyP99Ms = median(p99.busy);
  return {
    connections,
    restP99Ms,
    busyP99Ms,
    p99Ratio: busyP99Ms / restP99Ms,
    runsP99Ms: p99,
    fullEvaluations: reevaluations.reduce((sum, entry) => sum + entry.rounds, 0),
    reevaluationSeconds: reevaluations.map((entry) => entry.seconds),
    workloads: reevaluations[0]?.workloads ?? 0,
    cpuSeconds: reevaluations.reduce((sum, entry) => sum + entry.cpuSeconds, 0),
  };
}

/**
 * One policy change reflected in the workloads at risk: the API server applies it (`present`: the
 * policy created; else deleted) and the controller reports when its rejected count reaches the
 * expected one. Seconds from the API server's write to that; the controller's CPU over it.
 * @param {{request: import('./processes').RunningProcess<'servers/cluster-api.js'>['request']}} apiServer
 * @param {{request: import('./processes').RunningProcess<'servers/cluster-controller.js'>['request']}} controller
 * @param {boolean} present
 * @param {number} rejectedBefore
 */
async function policyChangeReflection(apiServer, controller, present, rejectedBefore) {
  const cpuBefore = await controller.request({ type: 'cpu-usage' });
  const change = await apiServer.request({ type: 'risk-policy', present });
  const expected = present ? rejectedBefore + change.workloads : rejectedBefore - change.workloads;
  const reflected = await controller.request({ type: 'await-risks', rejected: expected, timeoutMs: 120_000 });
  return {
    workloads: change.workloads,
    seconds: (reflected.atEpochMs - change.atEpochMs) / 1000,
    controllerCpuSeconds:
      (reflected.cpu.user - cpuBefore.user + reflected.cpu.system - cpuBefore.system) / 1e6,
    rejectedAfter: reflected.rejected,
  };
}

/**
 * The risk figures at cluster scale (bench/cluster.js): the canary ClusterPolicy created, then
 * deleted, each reflected; the admission p99 during full re-evaluations against at rest.
 * @param {{request: import('./processes').RunningProcess<'servers/cluster-api.js'>['request']}} apiServer
 * @param {{request: import('./processes').RunningProcess<'servers/cluster-controller.js'>['request'], info: {port: number}}} controller
 * @param {number} namespaces
 * @param {{connections: number, durationSeconds: number}} options
 */
async function clusterRiskFigures(apiServer, controller, namespaces, options) {
  const rejectedBefore = await controller.request({ type: 'rejected-workloads' });
  const created = await policyChangeReflection(apiServer, controller, true, rejectedBefore);
  const deleted = await policyChangeReflection(apiServer, controller, false, created.rejectedAfter);
  const side = admissionSide(controller.info.port, namespaces, 'team-');
  // The same change while the API answers admission checks without pause: the background work
  // then makes way (risks/risk-tracker.ts), so the change takes longer to show.
  const loadSeconds = 20;
  const load = loadTest({ ...side, connections: options.connections, durationSeconds: loadSeconds });
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const createdUnderLoad = await policyChangeReflection(apiServer, controller, true, deleted.rejectedAfter);
  await load;
  const deletedAfterLoad = await policyChangeReflection(
    apiServer,
    controller,
    false,
    createdUnderLoad.rejectedAfter,
  );
  const steadyTraffic = await reflectionUnderSteadyTraffic(
    apiServer,
    controller,
    side,
    deletedAfterLoad.rejectedAfter,
  );
  const admission = await admissionDuringReevaluation(controller, side, options);
  return {
    steadyTraffic,
    policyChange: {
      created,
      deleted,
      createdUnderAdmissionLoad: { ...createdUnderLoad, loadSeconds, loadStartedSecondsBefore: 1 },
      deletedAfterLoad,
    },
    admission,
  };
}

/** Admission checks per second of the steady traffic: a busy cluster's rate of creates and updates. */
const STEADY_RATE = 50;

/**
 * The case: one policy change reflected while the API answers a steady stream of admission
 * checks (STEADY_RATE per second, not as fast as it can: a closed loop saturates the controller,
 * where any background work is queueing for requests). The admission p99 of the same traffic at
 * rest, then during the change (created, then deleted), each window as long as the reflection
 * allows; the reflection's seconds.
 * @param {{request: import('./processes').RunningProcess<'servers/cluster-api.js'>['request']}} apiServer
 * @param {{request: import('./processes').RunningProcess<'servers/cluster-controller.js'>['request']}} controller
 * @param {import('./measure').Side} side
 * @param {number} rejectedBefore
 */
async function reflectionUnderSteadyTraffic(apiServer, controller, side, rejectedBefore) {
  const steady = { ...side, connections: 4, overallRate: STEADY_RATE, durationSeconds: 10 };
  await loadTest({ ...steady, durationSeconds: 2 });
  /** @type {number[]} */
  const restP99 = [];
  /** @type {number[]} */
  const busyP99 = [];
  /** @type {Array<Awaited<ReturnType<typeof policyChangeReflection>>>} */
  const changes = [];
  let rejected = rejectedBefore;
  // Rest and change windows alternate (rest, create, rest, delete, twice, then rest), so the
  // machine's drift hits both sides alike; each side's p99 is the median of its windows.
  for (let round = 0; round < 2; round++)
    for (const present of [true, false]) {
      restP99.push((await loadTest(steady)).latencyMs.p99);
      const during = loadTest(steady);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const change = await policyChangeReflection(apiServer, controller, present, rejected);
      rejected = change.rejectedAfter;
      changes.push(change);
      busyP99.push((await during).latencyMs.p99);
    }
  restP99.push((await loadTest(steady)).latencyMs.p99);
  const restP99Ms = median(restP99);
  const busyP99Ms = median(busyP99);
  const slowest = (/** @type {boolean} */ created) =>
    Math.max(...changes.filter((_, index) => (index % 2 === 0) === created).map((change) => change.seconds));
  return {
    ratePerSecond: STEADY_RATE,
    workloads: changes[0]?.workloads ?? 0,
    createdSeconds: slowest(true),
    deletedSeconds: slowest(false),
    changes,
    restP99Ms,
    busyP99Ms,
    restRunsP99Ms: restP99,
    duringChangeP99Ms: busyP99,
    p99Ratio: busyP99Ms / restP99Ms,
  };
}

/** The load average of the machine, 1 and 5 minutes. */
function loadAverage() {
  const [one, five] = os.loadavg();
  return { one: Number(one.toFixed(1)), five: Number(five.toFixed(1)) };
}

module.exports = { admissionSide, admissionDuringReevaluation, clusterRiskFigures, loadAverage };
