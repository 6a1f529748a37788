// @ts-check
'use strict';

// Scale benchmark, run in its own process with --expose-gc: builds the index from objects through
// the real adapters and Ingestor at two sizes and times the views of one 100-constraint namespace
// at each, so the ratio shows whether a namespace's cost follows the namespace or the cluster.
// Prints one JSON line with the figures.

const { performance } = require('node:perf_hooks');
const { AdapterRegistry } = require('../dist/services/controller/adapters/registry');
const { ConstraintIndex } = require('../dist/services/controller/index/constraint-index');
const { Ingestor, ParseErrorCounter } = require('../dist/services/controller/index/ingest');
const { buildNamespaceReport } = require('../dist/services/controller/views/report');
const { buildConstraintList } = require('../dist/services/controller/views/constraint-list');
const { buildHealth } = require('../dist/services/controller/views/health');
const { namespaceObject, policyObjects, WORKLOAD_LABELS } = require('./lib/cluster-objects');
const { summarizeLatencies } = require('./lib/measure');

const TARGET_NAMESPACE = 'scale-target';
const TARGET_CONSTRAINTS = 100;

const gc = (() => {
  if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc');
  return global.gc;
})();

function collectGarbage() {
  // Two passes: the first may only move survivors; weak references and finalizers settle in the second.
  gc();
  gc();
}

/**
 * Objects of a cluster: the target namespace with 100 constraints, the rest spread evenly.
 * @param {number} totalConstraints
 * @param {number} namespaceCount
 */
function clusterObjects(totalConstraints, namespaceCount) {
  /** @type {import('../dist/services/model/kubernetes').KubernetesObject[]} */
  const objects = [namespaceObject(TARGET_NAMESPACE), ...policyObjects(TARGET_NAMESPACE, TARGET_CONSTRAINTS)];
  const others = namespaceCount - 1;
  const rest = totalConstraints - TARGET_CONSTRAINTS;
  const base = Math.floor(rest / others);
  const withOneMore = rest - base * others;
  for (let position = 0; position < others; position++) {
    const namespace = `team-${position}`;
    objects.push(namespaceObject(namespace));
    objects.push(...policyObjects(namespace, base + (position < withOneMore ? 1 : 0)));
  }
  return objects;
}

/**
 * Times `operation` alone; `prepare` runs untimed before each call.
 * @param {number} iterations
 * @param {() => void} operation
 * @param {() => void} [prepare]
 */
function timeEach(iterations, operation, prepare = () => undefined) {
  for (let warmup = 0; warmup < Math.min(200, iterations); warmup++) {
    prepare();
    operation();
  }
  const durations = new Float64Array(iterations);
  for (let iteration = 0; iteration < iterations; iteration++) {
    prepare();
    const started = performance.now();
    operation();
    durations[iteration] = performance.now() - started;
  }
  return summarizeLatencies(durations);
}

/**
 * The figures of one cluster size (bench/run.js prints them).
 * @typedef {object} ScaleFigures
 * @property {number} totalConstraints
 * @property {number} namespaces
 * @property {number} objects
 * @property {number} buildMs
 * @property {number} buildCpuMs
 * @property {number} buildCpuMicrosecondsPerConstraint
 * @property {number} heapBytesPerConstraint
 * @property {number} heapMiB
 * @property {LatencySummary} reportMs
 * @property {LatencySummary} listMs
 * @property {LatencySummary} reportCachedMs
 * @property {LatencySummary} listCachedMs
 * @property {LatencySummary} healthMs
 */

/** @typedef {import('./lib/measure').LatencySummary} LatencySummary */

/** @typedef {{small: ScaleFigures, large: ScaleFigures}} ScaleOutput What this script prints. */

/**
 * The figures of one cluster size, and the index (kept alive until the heap is measured).
 * @param {number} totalConstraints
 * @param {number} namespaceCount
 * @param {number} iterations
 * @returns {ScaleFigures & {index?: import('../dist/services/controller/index/constraint-index').ConstraintIndex}}
 */
function measureCluster(totalConstraints, namespaceCount, iterations) {
  // The heap before the input exists: measured after it, the input (dropped below) was subtracted
  // from what the index keeps, and the figure came out near zero once the index kept less.
  collectGarbage();
  const heapBefore = process.memoryUsage().heapUsed;
  /** @type {ReturnType<typeof clusterObjects> | null} */
  let objects = clusterObjects(totalConstraints, namespaceCount);
  const objectCount = objects.length;
  const index = new ConstraintIndex();
  const parseErrors = new ParseErrorCounter();
  const ingestor = new Ingestor(index, new AdapterRegistry(), parseErrors);
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  for (const object of objects) ingestor.upsert(object);
  const buildMs = performance.now() - started;
  // CPU time as well as wall time: on a shared machine the wall time includes other processes' turns.
  const cpu = process.cpuUsage(cpuBefore);
  const buildCpuMs = (cpu.user + cpu.system) / 1000;
  // Drop the input so the heap figure is what the index (and what it shares with the objects) keeps.
  objects = null;
  collectGarbage();
  const heapAfter = process.memoryUsage().heapUsed;
  const constraints = index.totalConstraints();
  const namespaces = index.knownNamespaces().length;
  const targetCount = index.constraintsForNamespace(TARGET_NAMESPACE).length;
  if (
    constraints !== totalConstraints ||
    targetCount !== TARGET_CONSTRAINTS ||
    parseErrors.failingObjects().length
  )
    throw new Error(
      `generated cluster is not what was asked: ${constraints} constraints (${targetCount} in the target), ` +
        `${parseErrors.failingObjects().length} parse errors`,
    );

  const now = new Date();
  /** @type {import('../dist/services/controller/views/health').RuntimeState} */
  const state = {
    source: { synced: true, connected: true, lastScan: now, adapters: {}, problems: [] },
    parseErrors,
    flowObserver: { enabled: false, connected: false, address: '' },
    mcp: { enabled: false, transport: 'sse', port: 8090 },
    startedAt: now,
  };
  // Views are cached per index revision: a change elsewhere in the cluster before each call makes
  // every call build its view, the cost that must follow the namespace. Cached calls are timed too.
  let bump = 0;
  const changeElsewhere = () => index.setNamespace('elsewhere', { change: String(bump++) });
  const buildReport = () => JSON.stringify(buildNamespaceReport(index, TARGET_NAMESPACE, 'full', now));
  const buildList = () =>
    JSON.stringify(
      buildConstraintList(index, {
        namespace: TARGET_NAMESPACE,
        resource: { group: 'apps', resource: 'deployments' },
        labels: WORKLOAD_LABELS,
      }),
    );
  const report = timeEach(iterations, buildReport, changeElsewhere);
  const list = timeEach(iterations, buildList, changeElsewhere);
  const reportCached = timeEach(iterations, buildReport);
  const listCached = timeEach(iterations, buildList);
  const health = timeEach(Math.max(20, iterations / 50), () =>
    JSON.stringify(buildHealth(index, state, 'full')),
  );
  return {
    totalConstraints: constraints,
    namespaces,
    objects: objectCount,
    buildMs,
    buildCpuMs,
    buildCpuMicrosecondsPerConstraint: (buildCpuMs * 1000) / constraints,
    heapBytesPerConstraint: (heapAfter - heapBefore) / constraints,
    heapMiB: (heapAfter - heapBefore) / 2 ** 20,
    reportMs: report,
    listMs: list,
    reportCachedMs: reportCached,
    listCachedMs: listCached,
    healthMs: health,
    index,
  };
}

function main() {
  const iterations = Number(process.argv[2] || 3000);
  const small = measureCluster(1_000, 100, iterations);
  delete small.index;
  collectGarbage();
  const large = measureCluster(100_000, 10_000, iterations);
  delete large.index;
  /** @type {ScaleOutput} */
  const output = { small, large };
  process.stdout.write(`${JSON.stringify(output)}\n`);
}

main();
