// @ts-check
'use strict';

// The missing-companion inventory of two built checkouts (say main's and a branch's), in one process
// so that the other users of a shared machine load both alike: the heap each inventory holds per
// object, and the CPU of one full evaluation of every workload (what the controller runs after a
// change), alternating between the builds for `rounds` rounds. The cluster is bench/cluster.js's
// (namespaces of policy objects, Deployments, Services) with what makes the companion rules read the
// inventory: every Deployment exposes a `metrics` port and the monitoring CRDs are installed, so each
// workload asks for its namespace's Services; one in ten asks for a cert-manager Issuer by name.
//   node --expose-gc bench/missing-companions.js <before checkout> <after checkout> [namespaces constraints deployments services rounds]

const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { customResourceDefinitions, namespaceObject, policyObjects } = require('./lib/cluster-objects');
const { loadAverage } = require('./lib/risk-figures');

/** @typedef {Record<string, unknown> & {kind: string, metadata: Record<string, unknown>}} ClusterObject */

/**
 * @param {{namespaces: number, constraints: number, deployments: number, services: number}} size
 * @returns {ClusterObject[]}
 */
function clusterObjects({ namespaces, constraints, deployments, services }) {
  /** @type {ClusterObject[]} */
  const objects = [...customResourceDefinitions()];
  for (const [group, kind, plural] of [
    ['monitoring.coreos.com', 'ServiceMonitor', 'servicemonitors'],
    ['monitoring.coreos.com', 'PodMonitor', 'podmonitors'],
    ['cert-manager.io', 'Issuer', 'issuers'],
  ])
    objects.push({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${plural}.${group}` },
      spec: { group, names: { kind, plural }, scope: 'Namespaced' },
    });
  const names = Array.from({ length: namespaces }, (_, position) => `ns-${position}`);
  for (const name of names) {
    objects.push(namespaceObject(name));
    objects.push(...policyObjects(name, Math.floor(constraints / namespaces)));
  }
  for (let position = 0; position < services; position++) {
    const namespace = names[position % namespaces];
    objects.push({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: `web-${position}`, namespace, labels: { app: `web-${position}` } },
      spec: { selector: { app: `web-${position}` }, ports: [{ name: 'metrics', port: 9090 }] },
    });
  }
  for (let position = 0; position < deployments; position++) {
    const namespace = names[position % namespaces];
    const annotations = position % 10 === 0 ? { 'cert-manager.io/issuer': `issuer-${position}` } : {};
    if (position % 20 === 0)
      objects.push({
        apiVersion: 'cert-manager.io/v1',
        kind: 'Issuer',
        metadata: { name: `issuer-${position}`, namespace },
        spec: {},
      });
    objects.push({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: `web-${position}`, namespace, annotations },
      spec: {
        selector: { matchLabels: { app: `web-${position}` } },
        template: {
          metadata: { labels: { app: `web-${position}` } },
          spec: {
            containers: [{ name: 'web', image: 'web:1', ports: [{ name: 'metrics', containerPort: 9090 }] }],
          },
        },
      },
    });
  }
  // Selects no Service: every workload's Services are read, and none is monitored.
  objects.push({
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: { name: 'everything-labelled', namespace: 'monitoring' },
    spec: { selector: { matchLabels: { monitored: 'yes' } }, namespaceSelector: { any: true } },
  });
  return objects;
}

/** @param {string} checkout */
function trackerOf(checkout) {
  /** @type {{MissingResourceTracker: new (index: object, settings: object) => {inventory: {upsert(object: object): void}, currentFindings(): unknown[]}}} */
  const { MissingResourceTracker } = require(
    path.resolve(checkout, 'dist/services/controller/missing/tracker'),
  );
  const index = { labelsOfNamespace: () => ({}), knownNamespaces: () => [] };
  return new MissingResourceTracker(index, {
    debounceMs: 0,
    disabledRules: new Set(),
    meshRootNamespace: 'istio-system',
    defaultContact: '',
    canSee: () => true,
  });
}

function heapUsed() {
  if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc');
  global.gc();
  global.gc();
  return process.memoryUsage().heapUsed;
}

/**
 * Heap per inventory object of one build, in a child process (this script with `--heap`).
 * @param {string} checkout
 * @param {{namespaces: number, constraints: number, deployments: number, services: number}} size
 */
function inventoryHeapPerObject(checkout, size) {
  const output = execFileSync(
    process.execPath,
    ['--expose-gc', __filename, '--heap', checkout, JSON.stringify(size)],
    {
      encoding: 'utf8',
    },
  );
  return Number(output.trim());
}

/** @param {string} checkout @param {{namespaces: number, constraints: number, deployments: number, services: number}} size */
function measureHeap(checkout, size) {
  const objects = clusterObjects(size);
  const tracker = trackerOf(checkout);
  const start = heapUsed();
  for (const object of objects) tracker.inventory.upsert(object);
  const bytes = heapUsed() - start;
  // The tracker stays reachable until measured.
  return tracker.currentFindings === undefined ? 0 : bytes / objects.length;
}

/** @param {number[]} values */
const median = (values) => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)];

/** @param {string} before @param {string} after @param {{namespaces: number, constraints: number, deployments: number, services: number}} size @param {number} rounds */
function run(before, after, size, rounds) {
  const loadAtStart = loadAverage();
  const objects = clusterObjects(size);
  const checkouts = { before, after };
  /** @type {Record<'before' | 'after', number[]>} */
  const heapPerObject = { before: [], after: [] };
  // Each inventory in a fresh process of its own, alternating: what one build leaves in the heap is
  // never counted for the other.
  for (let round = 0; round < 3; round++)
    for (const build of /** @type {const} */ (['before', 'after']))
      heapPerObject[build].push(inventoryHeapPerObject(checkouts[build], size));
  const trackers = { before: trackerOf(before), after: trackerOf(after) };
  for (const tracker of Object.values(trackers))
    for (const object of objects) tracker.inventory.upsert(object);
  /** @type {Record<'before' | 'after', number[]>} */
  const evaluationMs = { before: [], after: [] };
  /** @type {Record<'before' | 'after', number>} */
  const findings = { before: 0, after: 0 };
  for (let round = 0; round < rounds; round++)
    for (const build of round % 2 === 0 ? ['before', 'after'] : ['after', 'before']) {
      const key = /** @type {'before' | 'after'} */ (build);
      const cpu = process.cpuUsage();
      findings[key] = trackers[key].currentFindings().length;
      const used = process.cpuUsage(cpu);
      evaluationMs[key].push((used.user + used.system) / 1000);
    }
  const result = {
    loadAverage: { atStart: loadAtStart, atEnd: loadAverage() },
    size: { ...size, inventoryObjects: objects.length, workloads: size.deployments },
    heapBytesPerInventoryObject: {
      before: median(heapPerObject.before),
      after: median(heapPerObject.after),
      readings: heapPerObject,
    },
    evaluationCpuMs: {
      before: median(evaluationMs.before),
      after: median(evaluationMs.after),
      readings: evaluationMs,
    },
    findings,
  };
  return {
    ...result,
    ratios: {
      heapPerObject: result.heapBytesPerInventoryObject.after / result.heapBytesPerInventoryObject.before,
      evaluationCpu: result.evaluationCpuMs.after / result.evaluationCpuMs.before,
    },
  };
}

if (require.main === module && process.argv[2] === '--heap') {
  console.log(measureHeap(process.argv[3], JSON.parse(process.argv[4])));
} else if (require.main === module) {
  const [before, after] = process.argv.slice(2, 4);
  if (!before || !after)
    throw new Error('usage: node --expose-gc bench/missing-companions.js <before> <after> [...]');
  const [namespaces = 10_000, constraints = 100_000, deployments = 5_000, services = 5_000, rounds = 9] =
    process.argv.slice(4).map(Number);
  console.log(
    JSON.stringify(run(before, after, { namespaces, constraints, deployments, services }, rounds), null, 2),
  );
}

module.exports = { run };
