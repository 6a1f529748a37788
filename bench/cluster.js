// @ts-check
'use strict';

// Memory at cluster scale (issue 26): the real controller (cluster source, reflectors, index,
// missing-companion inventory) against the Kubernetes API test server holding 10,000 namespaces,
// 100,000 constraints and an inventory of 50,000 Pods, 5,000 Deployments and 5,000 Services. Measures
// the time from the controller's start to its first complete sync, resident memory and heap (after
// a full collection) after that sync, every 10 s of a mixed churn at 1,000 changes/s, and after it.
// Then the workloads-at-risk figures (issue 35, bench/lib/risk-figures.js): one Kyverno ClusterPolicy
// created and deleted that touches the Deployments of every fifth namespace (1,000 at full size),
// each reflected; the admission p99 at rest and during full re-evaluations of every workload.
// The API server runs in a process of its own; its memory is not the controller's.

const { startProcess } = require('./lib/processes');
const { clusterRiskFigures, loadAverage } = require('./lib/risk-figures');

/** @typedef {{rssBytes: number, peakRssBytes: number, heapUsedBytes: number, heapTotalBytes: number, externalBytes: number, constraints: number}} MemoryReading */

const MiB = 2 ** 20;
/** The controller's default memory limit (infra/args.ts) and the heap limit derived from it. */
const DEFAULT_MEMORY_LIMIT_MIB = 512;
const DEPLOYED_HEAP_LIMIT_MEGABYTES = (DEFAULT_MEMORY_LIMIT_MIB * 3) / 4;

/**
 * The churn at `rate` changes per second for `seconds`, with a memory reading every 10 s of it;
 * returns once the last changes had time to arrive.
 * @param {import('./lib/processes').RunningProcess<'servers/cluster-api.js'>} apiServer
 * @param {import('./lib/processes').RunningProcess<'servers/cluster-controller.js'>} controller
 * @param {number} rate
 * @param {number} seconds
 */
async function churnWithReadings(apiServer, controller, rate, seconds) {
  /** @type {Array<MemoryReading & {second: number}>} */
  const duringChurn = [];
  const churn = apiServer.request({ type: 'run-changes', rate, durationMs: seconds * 1000 });
  let churnDone = false;
  void churn.finally(() => (churnDone = true));
  for (let second = 10; !churnDone; second += 10) {
    await Promise.race([churn, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    if (!churnDone) duringChurn.push({ second, ...(await controller.request({ type: 'memory' })) });
  }
  const applied = await churn;
  // Let the last changes arrive before the final reading.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  return { duringChurn, applied };
}

/**
 * @param {{namespaces?: number, constraints?: number, pods?: number, deployments?: number, services?: number, churnSeconds?: number, churnRate?: number, heapSnapshotFile?: string, connections?: number, durationSeconds?: number}} options
 */
async function runClusterBenchmark({
  namespaces = 10_000,
  constraints = 100_000,
  pods = 50_000,
  deployments = 5_000,
  services = 5_000,
  churnSeconds = 60,
  churnRate = 1_000,
  heapSnapshotFile,
  connections = 4,
  durationSeconds = 4,
}) {
  const loadAtStart = loadAverage();
  const size = { namespaces, constraints, pods, deployments, services };
  const apiServer = await startProcess('servers/cluster-api.js', [JSON.stringify(size)], {
    execArgv: ['--max-old-space-size=4096'],
    timeoutMs: 15 * 60_000,
  });
  try {
    const started = performance.now();
    const controller = await startProcess(
      'servers/cluster-controller.js',
      [JSON.stringify({ kubeConfigYaml: apiServer.info.kubeConfigYaml })],
      // The heap limit the Pulumi component gives the controller by default (infra/controller.ts:
      // three quarters of the 512Mi limit). FOREWARN_BENCH_CONTROLLER_FLAGS: Node flags to try
      // instead or besides (the last of a flag wins), e.g. --max-semi-space-size=2.
      {
        execArgv: [
          '--expose-gc',
          `--max-old-space-size=${DEPLOYED_HEAP_LIMIT_MEGABYTES}`,
          ...(process.env.FOREWARN_BENCH_CONTROLLER_FLAGS ?? '').split(' ').filter(Boolean),
        ],
        timeoutMs: 15 * 60_000,
      },
    );
    // From fork to first sync: the process's start-up counts, as it does for a pod.
    const readySeconds = (performance.now() - started) / 1000;
    try {
      // The controller's own CPU over its start and first sync: the rest of the wait is the API
      // server listing (and, on a shared machine, waiting for a core).
      const syncCpu = await controller.request({ type: 'cpu-usage' });
      // The first full evaluation of the workloads at risk, which starts after the first sync.
      const riskEvaluation = await controller.request({ type: 'risk-evaluation' });
      const afterSync = await controller.request({ type: 'memory' });
      if (afterSync.constraints < constraints)
        throw new Error(`the controller indexed ${afterSync.constraints} of ${constraints} constraints`);
      // What the heap holds after the first sync (summarise with bench/heap-summary.js).
      if (heapSnapshotFile) await controller.request({ type: 'heap-snapshot', file: heapSnapshotFile });
      const { duringChurn, applied } = await churnWithReadings(
        apiServer,
        controller,
        churnRate,
        churnSeconds,
      );
      const afterChurn = await controller.request({ type: 'memory' });
      const loadBeforeRisks = loadAverage();
      const risks = await clusterRiskFigures(apiServer, controller, namespaces, {
        connections,
        durationSeconds,
      });
      return {
        loadAverage: { atStart: loadAtStart, beforeRiskFigures: loadBeforeRisks, atEnd: loadAverage() },
        size,
        readySeconds,
        syncCpuSeconds: (syncCpu.user + syncCpu.system) / 1e6,
        riskEvaluation,
        afterSync,
        duringChurn,
        afterChurn,
        churn: { ...applied, rate: churnRate, achievedPerSecond: applied.changes / applied.seconds },
        heapBytesPerConstraint: afterSync.heapUsedBytes / afterSync.constraints,
        ...risks,
        growthMiB: {
          rss: (afterChurn.rssBytes - afterSync.rssBytes) / MiB,
          heap: (afterChurn.heapUsedBytes - afterSync.heapUsedBytes) / MiB,
        },
      };
    } finally {
      await controller.stop();
    }
  } finally {
    await apiServer.stop();
  }
}

/**
 * The verdicts of a cluster run.
 * @param {Awaited<ReturnType<typeof runClusterBenchmark>>} figures
 * @returns {import('./run').Verdict[]}
 */
function clusterVerdicts(figures) {
  /** @param {number} value @param {number} [digits] */
  const format = (value, digits = 2) => value.toFixed(digits);
  // Settled: the readings after a full collection; peak: the process's high-water mark (the first
  // sync's garbage included), which is what a memory limit has to hold.
  const settledRss = Math.max(
    figures.afterSync.rssBytes,
    figures.afterChurn.rssBytes,
    ...figures.duringChurn.map((reading) => reading.rssBytes),
  );
  const peakRss = figures.afterChurn.peakRssBytes;
  return [
    {
      benchmark: 'cluster time to ready',
      target: '< 30 s',
      measured: `${format(figures.readySeconds, 1)} s wall, ${format(figures.syncCpuSeconds, 1)} s controller CPU (load ${figures.loadAverage.atStart.one})`,
      pass: figures.readySeconds < 30,
    },
    {
      benchmark: 'cluster RSS (settled, after a collection)',
      target: '< 400 MiB',
      measured: `${format(settledRss / MiB, 0)} MiB`,
      pass: settledRss < 400 * MiB,
    },
    {
      benchmark: 'cluster RSS (peak, first sync included)',
      target: `< ${DEFAULT_MEMORY_LIMIT_MIB} MiB (the default limit)`,
      measured: `${format(peakRss / MiB, 0)} MiB`,
      pass: peakRss < DEFAULT_MEMORY_LIMIT_MIB * MiB,
    },
    {
      benchmark: 'cluster heap per constraint (whole process)',
      target: '<= 2048 B',
      measured: format(figures.heapBytesPerConstraint, 0),
      pass: figures.heapBytesPerConstraint <= 2048,
    },
    {
      benchmark: 'cluster full evaluation of the workloads at risk (CPU after the first sync)',
      target: '< 60 s',
      measured: `${format(figures.riskEvaluation.cpuSeconds, 1)} s for ${figures.riskEvaluation.evaluations} workloads`,
      pass: figures.riskEvaluation.evaluated && figures.riskEvaluation.cpuSeconds < 60,
    },
    {
      benchmark: `cluster: one policy change touching ${figures.policyChange.created.workloads} workloads, reflected (created / deleted)`,
      target: '<= 2 s',
      measured: `${format(figures.policyChange.created.seconds)} / ${format(figures.policyChange.deleted.seconds)} s (controller CPU ${format(figures.policyChange.created.controllerCpuSeconds)} / ${format(figures.policyChange.deleted.controllerCpuSeconds)} s)`,
      pass: Math.max(figures.policyChange.created.seconds, figures.policyChange.deleted.seconds) <= 2,
    },
    {
      benchmark: `cluster: the same change under steady admission traffic (${figures.steadyTraffic.ratePerSecond}/s), reflected (created / deleted)`,
      target: '<= 2 s',
      measured: `${format(figures.steadyTraffic.createdSeconds)} / ${format(figures.steadyTraffic.deletedSeconds)} s (slowest of two each)`,
      pass: Math.max(figures.steadyTraffic.createdSeconds, figures.steadyTraffic.deletedSeconds) <= 2,
    },
    {
      benchmark: 'cluster: admission p99 of that traffic during the change, vs at rest',
      target: '<= 1.10',
      measured: `${format(figures.steadyTraffic.p99Ratio)} (${format(figures.steadyTraffic.busyP99Ms)} / ${format(figures.steadyTraffic.restP99Ms)} ms, medians of alternating windows)`,
      pass: figures.steadyTraffic.p99Ratio <= 1.1,
    },
    {
      benchmark: 'cluster: admission p99 during full re-evaluations of the workloads at risk, vs at rest',
      target: '<= 1.10',
      measured: `${format(figures.admission.p99Ratio)} (${format(figures.admission.busyP99Ms)} / ${format(figures.admission.restP99Ms)} ms)`,
      pass: figures.admission.p99Ratio <= 1.1,
    },
    // Post-GC heap may move by a few MiB with what is in flight; growth is a steady rise beyond that.
    {
      benchmark: 'cluster heap growth over churn',
      target: '< 16 MiB',
      measured: `${format(figures.growthMiB.heap, 1)} MiB`,
      pass: figures.growthMiB.heap < 16,
    },
  ];
}

module.exports = { runClusterBenchmark, clusterVerdicts };

if (require.main === module) {
  // node bench/cluster.js [namespaces constraints pods deployments services churnSeconds [heap-snapshot-file]]
  const [namespaces, constraints, pods, deployments, services, churnSeconds] = process.argv
    .slice(2, 8)
    .map(Number);
  const heapSnapshotFile = process.argv[8];
  runClusterBenchmark({
    namespaces,
    constraints,
    pods,
    deployments,
    services,
    churnSeconds,
    heapSnapshotFile,
  }).then(
    (result) => console.log(JSON.stringify(result, null, 2)),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
