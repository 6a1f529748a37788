// @ts-check
'use strict';

// How long one policy change holds the controller's event loop in one step (issue 35's admission
// p99 during a policy change). The real runtime (adapters, index, workloads-at-risk and
// missing-companion trackers) in this process, fed the cluster benchmark's objects directly (no
// API server: the figure is the controller's own step): 10,000 namespaces, 100,000 constraints,
// 5,000 Deployments and 5,000 Services by default. A Kyverno ClusterPolicy reaching the Deployments
// of every fifth namespace is created and deleted, and, as the baseline of the same run, a Kyverno
// Policy with the same rule in one namespace. Per change: the synchronous step (the watch event's
// upsert or delete with every listener) and the longest task on the loop until the background work
// is done, garbage collections apart. Ratio: the wide change's step ÷ the one-namespace change's.
//
//   node --expose-gc bench/policy-change-steps.js [namespaces constraints deployments services rounds]

const { performance, PerformanceObserver, monitorEventLoopDelay } = require('node:perf_hooks');
const os = require('node:os');
const { startController } = require('../dist/services/controller/runtime');
const { parseControllerConfig } = require('../dist/services/controller/config');
const { silentLogger } = require('../dist/services/logging/logger');
const { namespaceObject, policyObjects, WORKLOAD_LABELS } = require('./lib/cluster-objects');
const { median } = require('./lib/measure');

const [namespaces = 10_000, constraints = 100_000, deployments = 5_000, services = 5_000, rounds = 5] =
  process.argv.slice(2).map(Number);
const CANARY = { 'forewarn.io/bench-group': 'canary' };

/**
 * The cluster benchmark's policy (servers/cluster-api.js): Deployments need an `owner` label.
 * @param {boolean} wide a ClusterPolicy on every canary namespace, else a Policy of one namespace
 */
function requireOwner(wide) {
  const rule = {
    name: 'require-owner',
    match: {
      any: [
        {
          resources: {
            kinds: ['Deployment'],
            ...(wide ? { namespaceSelector: { matchLabels: CANARY } } : {}),
          },
        },
      ],
    },
    validate: { message: 'an owner label is required', pattern: { metadata: { labels: { owner: '?*' } } } },
  };
  return {
    apiVersion: 'kyverno.io/v1',
    kind: wide ? 'ClusterPolicy' : 'Policy',
    metadata: wide
      ? { name: 'require-owner-on-canaries', uid: 'bench-wide' }
      : { name: 'require-owner', namespace: 'team-5', uid: 'bench-narrow' },
    spec: { validationFailureAction: 'Enforce', rules: [rule] },
  };
}

/** @param {string} namespace @param {number} position */
function workloads(namespace, position) {
  const labels = WORKLOAD_LABELS;
  return [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: `web-${position}`, namespace, labels, uid: `d-${namespace}-${position}` },
      spec: {
        replicas: 2,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { containers: [{ name: 'web', image: 'registry.example.com/web:1' }] },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: `web-${position}`, namespace, uid: `s-${namespace}-${position}` },
      spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
    },
  ];
}

/** @type {import('../dist/services/controller/index/ingest').Ingestor | undefined} */
let sink;

/** @type {import('../dist/services/controller/object-source').SourceFactory} */
const source = (ingestor) => {
  sink = ingestor;
  return {
    start: async () => {
      const names = Array.from({ length: namespaces }, (_, position) => `team-${position}`);
      const base = Math.floor(constraints / namespaces);
      names.forEach((name, position) => {
        const object = namespaceObject(name);
        object.metadata.labels = { ...object.metadata.labels, ...(position % 5 === 0 ? CANARY : {}) };
        ingestor.upsert(object);
        for (const policy of policyObjects(name, base + (position < constraints - base * namespaces ? 1 : 0)))
          ingestor.upsert(policy);
      });
      for (let position = 0; position < Math.max(deployments, services); position++) {
        const [deployment, service] = workloads(
          names[position % namespaces],
          Math.floor(position / namespaces),
        );
        if (position < deployments) ingestor.upsert(deployment);
        if (position < services) ingestor.upsert(service);
      }
    },
    stop: async () => undefined,
    status: () => ({ synced: true, connected: true, lastScan: new Date(), adapters: {}, problems: [] }),
    isSynced: () => true,
    watchesKind: () => true,
  };
};

async function main() {
  const config = parseControllerConfig(
    ['--port', '0', '--address', '127.0.0.1', '--mcp=false', '--api-auth=none'],
    {},
  );
  const controller = await startController(config, silentLogger(), { source });
  const ingestor = /** @type {NonNullable<typeof sink>} */ (sink);
  const settled = async () => {
    await controller.risks.idle();
    await new Promise((resolve) => setTimeout(resolve, 250)); // the missing-companion timer (100 ms)
    await controller.missingResources.idle();
  };
  await settled();
  /** @type {number[]} */
  let collections = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) collections.push(entry.duration);
  }).observe({ entryTypes: ['gc'] });
  /** @type {Record<string, {stepMs: number[], stepCpuMs: number[], longestTaskMs: number[], longestCollectionMs: number[]}>} */
  const figures = {};
  const loadAtStart = os.loadavg()[0];
  for (let round = 0; round < rounds; round++)
    for (const wide of [false, true])
      for (const created of [true, false]) {
        const label = `${wide ? 'wide' : 'one namespace'}, ${created ? 'created' : 'deleted'}`;
        const entry = (figures[label] ??= {
          stepMs: [],
          stepCpuMs: [],
          longestTaskMs: [],
          longestCollectionMs: [],
        });
        await new Promise((resolve) => setTimeout(resolve, 300));
        collections = [];
        const loop = monitorEventLoopDelay({ resolution: 1 });
        loop.enable();
        const cpu = process.cpuUsage();
        const started = performance.now();
        if (created) ingestor.upsert(requireOwner(wide));
        else ingestor.delete(requireOwner(wide));
        const stepMs = performance.now() - started;
        const stepCpu = process.cpuUsage(cpu);
        await settled();
        loop.disable();
        entry.stepMs.push(stepMs);
        entry.stepCpuMs.push((stepCpu.user + stepCpu.system) / 1000);
        // The loop's longest delay of a 1 ms timer: the longest task while the change was worked out.
        entry.longestTaskMs.push(Math.max(stepMs, loop.max / 1e6 - 1));
        entry.longestCollectionMs.push(Math.max(0, ...collections));
      }
  const round2 = (/** @type {number} */ value) => Math.round(value * 100) / 100;
  const summary = Object.fromEntries(
    Object.entries(figures).map(([label, entry]) => [
      label,
      {
        stepMsMedian: round2(median(entry.stepMs)),
        stepMsMax: round2(Math.max(...entry.stepMs)),
        stepCpuMsMedian: round2(median(entry.stepCpuMs)),
        longestTaskMsMedian: round2(median(entry.longestTaskMs)),
        longestCollectionMsMedian: round2(median(entry.longestCollectionMs)),
      },
    ]),
  );
  const ratio = (/** @type {string} */ change) =>
    round2(median(figures[`wide, ${change}`].stepMs) / median(figures[`one namespace, ${change}`].stepMs));
  console.log(
    JSON.stringify(
      {
        size: { namespaces, constraints: controller.index.totalConstraints(), deployments, services, rounds },
        loadAverage: { atStart: round2(loadAtStart), atEnd: round2(os.loadavg()[0]) },
        changes: summary,
        wideStepOverOneNamespace: { created: ratio('created'), deleted: ratio('deleted') },
      },
      null,
      2,
    ),
  );
  await controller.close();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
