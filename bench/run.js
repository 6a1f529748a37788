// @ts-check
'use strict';

// `npm run bench` (after `npm run build`): every benchmark as a ratio against a baseline measured
// in the same run, since the load generator shares the machine's cores with the servers (and other
// users). Prints a table per benchmark and the verdicts, and writes bench/results/latest.json.
// Options: --only=admission,peers,reads,...   --duration=<seconds per measured run, default 4>
//   --rounds=<palindromic passes of the peer benchmark, default 2: four runs per case>
const { execFile } = require('node:child_process');
const { mkdirSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { machineInfo } = require('./lib/measure');
const { format, printTable } = require('./lib/table');
const { runAdmissionBenchmark, admissionVerdicts } = require('./admission');
const { runReadsBenchmark } = require('./reads');
const { runWatchBenchmark } = require('./watch');
const { HOSTILE_MATCHERS, runHostile } = require('./lib/hostile-runner');
const { runApiServerBenchmark } = require('./apiserver');
const { reportPeers } = require('./lib/peers-report');
const { reportGatekeeper } = require('./lib/gatekeeper-report');
const { runClusterBenchmark, clusterVerdicts } = require('./cluster');

/**
 * A line of the verdicts table (and of `verdicts` in latest.json); `pass: null` is for information.
 * @typedef {{benchmark: string, target: string, measured: string, pass: boolean | null}} Verdict
 */
/** @typedef {import('./lib/measure').SideFigures} SideFigures */

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  // Any other argument still starts the benchmarks: `--help` must not be the one that does.
  console.log(
    'node bench/run.js [--only=admission,apiserver,peers,reads,scale,cluster,watch,verdicts,gatekeeper,hostile,startup] [--duration=<seconds per measured run, default 4>] [--churn=<seconds of churn in cluster, default 60>] [--rounds=<peer benchmark passes, default 2>]',
  );
  process.exit(0);
}

const options = Object.fromEntries(
  process.argv.slice(2).flatMap((argument) => {
    const match = /^--([a-z]+)=(.*)$/.exec(argument);
    return match ? [[match[1], match[2]]] : [];
  }),
);
const selected = (
  options.only || 'admission,apiserver,peers,reads,scale,cluster,watch,verdicts,gatekeeper,hostile,startup'
).split(',');
// Churn of the cluster benchmark; the 10 minutes: --churn=600.
const churnSeconds = Number(options.churn || 60);
const durationSeconds = Number(options.duration || 4);
const peerRounds = Number(options.rounds || 2);

/**
 * Runs a benchmark script in a process of its own and parses the JSON line it prints.
 * @param {string[]} nodeArguments
 * @returns {Promise<unknown>}
 */
function runJsonScript(nodeArguments) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, nodeArguments, { maxBuffer: 16 * 1024 * 1024 }, (error, stdout) =>
      error ? reject(error) : resolve(JSON.parse(stdout)),
    );
  });
}

// The scripts print what their typedefs say (VerdictsOutput, ScaleOutput), checked where they print it.
const runVerdicts = async () =>
  /** @type {import('./verdicts').VerdictsOutput} */ (
    await runJsonScript([path.join(__dirname, 'verdicts.js')])
  );

const runGatekeeper = async () =>
  /** @type {import('./gatekeeper').GatekeeperOutput} */ (
    await runJsonScript([path.join(__dirname, 'gatekeeper.js')])
  );

const runScale = async () =>
  /** @type {import('./scale').ScaleOutput} */ (
    await runJsonScript(['--expose-gc', path.join(__dirname, 'scale.js'), '3000'])
  );

/**
 * The headers of throughputAndLatencyCells, the subject named `subject`.
 * @param {string} subject
 */
function throughputAndLatencyHeaders(subject) {
  return ['bare req/s', `${subject} req/s`, 'ratio', 'bare p50/p99 ms', `${subject} p50/p99 ms`];
}

/**
 * The cells that start every comparison's row: both sides' req/s, their ratio, both p50/p99.
 * @param {{baseline: SideFigures, subject: SideFigures, ratios: {baseline: import('./lib/measure').Ratios}}} result
 */
function throughputAndLatencyCells(result) {
  return [
    format(result.baseline.requestsPerSecond, 0),
    format(result.subject.requestsPerSecond, 0),
    format(result.ratios.baseline.throughput),
    `${format(result.baseline.p50Ms)}/${format(result.baseline.p99Ms)}`,
    `${format(result.subject.p50Ms)}/${format(result.subject.p99Ms)}`,
  ];
}

/** @type {Record<string, (verdicts: Verdict[]) => Promise<unknown>>} */
const BENCHMARKS = {
  startup: (verdicts) => require('./lib/startup-report').runStartupBenchmark(runJsonScript, verdicts),
  verdicts: async (verdicts) => {
    const figures = await runVerdicts();
    printTable(
      'Verdicts: CPU per admitted object, 20-constraint namespace, in process (no HTTP)',
      ['constraints', 'verdicts', 'defaulting µs', 'evaluate µs', 'admission check µs', 'webhook view µs'],
      [
        [
          figures.constraints,
          Object.entries(figures.verdicts)
            .map(([verdict, count]) => `${verdict} ${count}`)
            .join(', '),
          format(figures.defaultingCpuMicrosPerObject, 1),
          format(figures.evaluateCpuMicrosPerObject, 1),
          format(figures.admissionCheckCpuMicrosPerObject, 1),
          format(figures.admissionWarningsCpuMicrosPerObject, 1),
        ],
      ],
    );
    // The object is defaulted once before its verdicts: both count against the budget.
    const verdictMicros = figures.defaultingCpuMicrosPerObject + figures.evaluateCpuMicrosPerObject;
    verdicts.push({
      benchmark: 'verdict evaluation CPU per object (defaulting included), 20 constraints',
      target: `< ${figures.budgetMicros} µs`,
      measured: format(verdictMicros, 1),
      pass: verdictMicros < figures.budgetMicros,
    });
  },
  gatekeeper: async (verdicts) => {
    verdicts.push(reportGatekeeper(await runGatekeeper()));
  },
  hostile: async (verdicts) => {
    /** @type {Array<import('./hostile').HostileOutput | {matcher: string, error: string}>} */
    const results = [];
    for (const matcher of HOSTILE_MATCHERS) results.push(await runHostile(matcher));
    printTable(
      'Hostile inputs (issue 27): time per evaluation at doubling sizes; growth per doubling, 1 = linear',
      ['matcher', 'sizes', 'ms per evaluation', 'growth per doubling'],
      results.map((result) =>
        'error' in result
          ? [result.matcher, '', result.error, '']
          : [
              result.matcher,
              `${result.points.map((point) => point.size).join('/')} ${result.unit}`,
              result.points.map((point) => format(point.milliseconds, 3)).join('/'),
              result.growthPerDoubling.map((ratio) => format(ratio)).join('/'),
            ],
      ),
    );
    // The growth verdicts, then issue 32's engines (bench/lib/hostile-runner.js).
    await require('./lib/hostile-runner').reportHostile(verdicts, results);
    return results;
  },
  admission: async (verdicts) => {
    const results = await runAdmissionBenchmark({ concurrencies: [1, 16, 64], durationSeconds });
    printTable(
      'Admission path: POST /validate over HTTPS, distinct realistic reviews, webhook + controller vs bare HTTPS server',
      [
        'ns constraints',
        'conc',
        ...throughputAndLatencyHeaders('webhook'),
        'added p50/p99 ms',
        'memo hits',
        'floor req/s',
        'vs floor',
        'label-query req/s',
        'vs label query',
        'server cpu µs/req bare/webhook+ctl/label-query/floor',
      ],
      results.map((result) => [
        result.namespaceConstraints,
        result.connections,
        ...throughputAndLatencyCells(result),
        `+${format(result.addedMs.p50)}/+${format(result.addedMs.p99)}`,
        `${format(result.memo.hitRate * 100, 1)}% of ${result.memo.checks}`,
        format(result.designFloor.requestsPerSecond, 0),
        format(result.ratios.designFloor.throughput),
        format(result.labelQuery.requestsPerSecond, 0),
        format(result.ratios.labelQuery.throughput),
        [result.baseline, result.subject, result.labelQuery, result.designFloor]
          .map((side) => format(side.serverCpuMicrosecondsPerRequest, 0))
          .join('/'),
      ]),
    );
    for (const result of results) verdicts.push(...admissionVerdicts(result));
    return results;
  },
  apiserver: async (verdicts) => {
    const figures = await runApiServerBenchmark({ durationSeconds });
    if ('skipped' in figures) {
      console.log(`\nReal API server: skipped, ${figures.skipped}`);
      return figures;
    }
    const cell = (/** @type {{p50Ms: number, p99Ms: number, requestsPerSecond: number}} */ side) =>
      `${format(side.p50Ms)}/${format(side.p99Ms)} (${format(side.requestsPerSecond, 0)}/s)`;
    printTable(
      `Real kube-apiserver ${figures.kubernetesVersion}: Deployment creates with dryRun=All, distinct names`,
      ['clients', 'none p50/p99 ms', 'bare webhook', 'Forewarn', 'Forewarn over bare p50/p99 ms', 'warnings'],
      figures.rows.map((row) => [
        row.connections,
        cell(row.none),
        cell(row.bare),
        cell(row.forewarn),
        `+${format(row.forewarnOverBareMs.p50)}/+${format(row.forewarnOverBareMs.p99)}`,
        row.warningsPerCreate,
      ]),
    );
    for (const row of figures.rows)
      verdicts.push({
        benchmark: `real apiserver c=${row.connections}, Forewarn over bare webhook`,
        target: '<= +1 ms p50, +5 ms p99',
        measured: `+${format(row.forewarnOverBareMs.p50)} / +${format(row.forewarnOverBareMs.p99)} ms`,
        pass: row.forewarnOverBareMs.p50 <= 1 && row.forewarnOverBareMs.p99 <= 5,
      });
    return figures;
  },
  peers: (verdicts) => reportPeers(verdicts, durationSeconds, peerRounds),
  reads: async (verdicts) => {
    const results = await runReadsBenchmark({ connections: 16, durationSeconds });
    printTable(
      'Controller reads at 16 connections vs bare express JSON handler (same body)',
      [
        'route',
        ...throughputAndLatencyHeaders('controller'),
        'response bytes',
        'server cpu µs/req bare/controller',
      ],
      results.map((result) => [
        result.route,
        ...throughputAndLatencyCells(result),
        result.subject.bytesPerResponse,
        `${format(result.baseline.serverCpuMicrosecondsPerRequest, 0)}/${format(result.subject.serverCpuMicrosecondsPerRequest, 0)}`,
      ]),
    );
    for (const result of results)
      verdicts.push({
        benchmark: `reads ${result.route}`,
        target: '>= 0.60 of bare',
        measured: format(result.ratios.baseline.throughput),
        pass: result.ratios.baseline.throughput >= 0.6,
      });
    return results;
  },
  scale: async (verdicts) => {
    const { small, large } = await runScale();
    printTable(
      'Scale: index built from objects through the adapters and Ingestor',
      [
        'constraints',
        'namespaces',
        'build s (wall/cpu)',
        'heap MiB',
        'heap B/constraint',
        'report p50/p99 ms',
        'list p50/p99 ms',
        'cached report/list p50 ms',
        'health p50 ms',
      ],
      [small, large].map((figures) => [
        figures.totalConstraints,
        figures.namespaces,
        `${format(figures.buildMs / 1000)}/${format(figures.buildCpuMs / 1000)}`,
        format(figures.heapMiB, 1),
        format(figures.heapBytesPerConstraint, 0),
        `${format(figures.reportMs.p50, 3)}/${format(figures.reportMs.p99, 3)}`,
        `${format(figures.listMs.p50, 3)}/${format(figures.listMs.p99, 3)}`,
        `${format(figures.reportCachedMs.p50, 3)}/${format(figures.listCachedMs.p50, 3)}`,
        format(figures.healthMs.p50, 3),
      ]),
    );
    const reportRatio = large.reportMs.p50 / small.reportMs.p50;
    const listRatio = large.listMs.p50 / small.listMs.p50;
    verdicts.push({
      benchmark: 'scale report p50, 100-constraint ns, 100k vs 1k total',
      target: '< 1.5',
      measured: format(reportRatio),
      pass: reportRatio < 1.5,
    });
    verdicts.push({
      benchmark: 'scale list p50, 100-constraint ns, 100k vs 1k total',
      target: '< 1.5',
      measured: format(listRatio),
      pass: listRatio < 1.5,
    });
    return { small, large, reportRatio, listRatio };
  },
  cluster: async (verdicts) => {
    const figures = await runClusterBenchmark({ churnSeconds, durationSeconds });
    const MiB = 2 ** 20;
    printTable(
      'Cluster scale: controller on the API test server (10,000 namespaces, 100,000 constraints, 50,000 Pods, 5,000 Deployments, 5,000 Services)',
      [
        'ready s',
        'after sync RSS/heap MiB',
        `after ${churnSeconds} s churn RSS/heap MiB`,
        'peak RSS MiB',
        'churn achieved/s',
        'heap B/constraint (whole process)',
      ],
      [
        [
          format(figures.readySeconds, 1),
          `${format(figures.afterSync.rssBytes / MiB, 0)}/${format(figures.afterSync.heapUsedBytes / MiB, 0)}`,
          `${format(figures.afterChurn.rssBytes / MiB, 0)}/${format(figures.afterChurn.heapUsedBytes / MiB, 0)}`,
          format(figures.afterChurn.peakRssBytes / MiB, 0),
          format(figures.churn.achievedPerSecond, 0),
          format(figures.heapBytesPerConstraint, 0),
        ],
      ],
    );
    verdicts.push(...clusterVerdicts(figures));
    return figures;
  },
  watch: async (verdicts) => {
    const results = await runWatchBenchmark();
    printTable(
      'Watch path: change on the API server until in the index (= visible in /resources/*) vs bare watch client',
      [
        'changes/s',
        'achieved',
        'received',
        'bare p50/p99 ms',
        'controller p50/p99 ms',
        'p50 ratio',
        'p99 ratio',
        'reports = server',
      ],
      results.map((result) => [
        result.changesPerSecond,
        format(result.subject.achievedPerSecond, 0),
        `${result.subject.received}/${result.subject.changes}`,
        `${format(result.baseline.delayMs.p50)}/${format(result.baseline.delayMs.p99)}`,
        `${format(result.subject.delayMs.p50)}/${format(result.subject.delayMs.p99)}`,
        format(result.p50Ratio),
        format(result.p99Ratio),
        `${result.reportsMatchServer.policies - result.reportsMatchServer.mismatches}/${result.reportsMatchServer.policies}`,
      ]),
    );
    for (const result of results)
      verdicts.push({
        benchmark: `watch ${result.changesPerSecond}/s p99, none lost`,
        target: '< 1000 ms',
        measured: `${format(result.subject.delayMs.p99, 1)} ms, ${result.subject.changes - result.subject.received} lost`,
        pass:
          result.subject.delayMs.p99 < 1000 &&
          result.subject.received === result.subject.changes &&
          result.reportsMatchServer.mismatches === 0,
      });
    return results;
  },
};

async function main() {
  const started = Date.now();
  /** @type {{machine: ReturnType<typeof machineInfo>, settings: object, results: Record<string, unknown>, verdicts: Verdict[], elapsedSeconds?: number}} */
  const output = {
    machine: machineInfo(),
    settings: { selected, durationSeconds },
    results: {},
    verdicts: [],
  };
  console.log(
    `Forewarn benchmarks, ${output.machine.date}: ${output.machine.cpus} x ${output.machine.cpuModel}, ` +
      `${output.machine.memoryGiB} GiB, load ${output.machine.loadAverageAtStart.join(' ')}, ` +
      `node ${output.machine.node}, ${output.machine.package}`,
  );
  for (const name of selected) {
    if (!BENCHMARKS[name])
      throw new Error(`unknown benchmark ${name}; known: ${Object.keys(BENCHMARKS).join(', ')}`);
    output.results[name] = await BENCHMARKS[name](output.verdicts);
  }
  output.elapsedSeconds = Math.round((Date.now() - started) / 1000);
  printTable(
    `Verdicts (${output.elapsedSeconds} s)`,
    ['benchmark', 'target', 'measured', 'result'],
    output.verdicts.map((verdict) => [
      verdict.benchmark,
      verdict.target,
      verdict.measured,
      verdict.pass === null ? '-' : verdict.pass ? 'pass' : 'FAIL',
    ]),
  );
  const resultsDirectory = path.join(__dirname, 'results');
  mkdirSync(resultsDirectory, { recursive: true });
  writeFileSync(path.join(resultsDirectory, 'latest.json'), `${JSON.stringify(output, null, 2)}\n`);
  console.log(`\nwritten: bench/results/latest.json`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
