// @ts-check
'use strict';

// The real controller (runtime, cluster source with its reflectors, Ingestor, index, missing-
// companion inventory, HTTP app) against an API server, run with --expose-gc so its memory can be
// read after a full collection. Reports ready once the first sync completed, with how long that
// took from the process's start. argv[2]: JSON `{"kubeConfigYaml": ...}`.

const { performance } = require('node:perf_hooks');
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startController } = require('../../dist/services/controller/runtime');
const { parseControllerConfig } = require('../../dist/services/controller/config');
const { createLogger } = require('../../dist/services/logging/logger');
const { z } = require('zod');
const { reportReady, serveCommands } = require('../lib/processes');
const { awaitRejected, reevaluateFor, rejectedWorkloads } = require('../lib/risk-commands');
const v8 = require('node:v8');

const gc = (() => {
  if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc');
  return global.gc;
})();

async function main() {
  const settings = z.object({ kubeConfigYaml: z.string() }).parse(JSON.parse(process.argv[2]));
  // `--kubeconfig FILE`, as the controller is run outside a cluster.
  const directory = mkdtempSync(path.join(os.tmpdir(), 'forewarn-bench-kube-'));
  const kubeConfigFile = path.join(directory, 'kubeconfig');
  writeFileSync(kubeConfigFile, settings.kubeConfigYaml);
  process.on('exit', () => rmSync(directory, { recursive: true, force: true }));
  const config = parseControllerConfig(
    [
      '--kubeconfig',
      kubeConfigFile,
      '--port',
      '0',
      '--address',
      '127.0.0.1',
      '--mcp=false',
      '--api-auth=none',
      // Controller flags to try besides (the last of a flag wins), e.g. --warm-up=false.
      ...(process.env.FOREWARN_BENCH_CONTROLLER_ARGS ?? '').split(' ').filter(Boolean),
    ],
    {},
  );
  const controller = await startController(
    config,
    createLogger({ service: 'controller', level: 'error', destination: process.stderr }),
  );
  const readyMs = performance.now();
  // The workloads at risk are evaluated after the first sync, in the background (issue 35).
  const cpuAtReady = process.cpuUsage();
  serveCommands({
    memory: () => {
      gc();
      gc();
      const usage = process.memoryUsage();
      return {
        rssBytes: usage.rss,
        // The high-water mark since start (the first sync's peak): what a memory limit must hold.
        peakRssBytes: process.resourceUsage().maxRSS * 1024,
        heapUsedBytes: usage.heapUsed,
        heapTotalBytes: usage.heapTotal,
        externalBytes: usage.external,
        constraints: controller.index.totalConstraints(),
      };
    },
    'cpu-usage': () => process.cpuUsage(),
    // Waits for the first full evaluation of the workloads at risk: its CPU since the first sync.
    'risk-evaluation': async () => {
      await controller.risks.idle();
      const cpu = process.cpuUsage(cpuAtReady);
      const status = controller.risks.status();
      return {
        cpuSeconds: (cpu.user + cpu.system) / 1e6,
        secondsSinceReady: (performance.now() - readyMs) / 1000,
        workloads: status.workloads,
        evaluations: status.evaluations,
        evaluated: status.evaluated,
      };
    },
    // Full re-evaluations back to back for `seconds` (bench/lib/risk-figures.js measures the API during them).
    reevaluate: ({ seconds }) => reevaluateFor(controller.risks, seconds),
    // Waits until the workloads at risk count `rejected` rejected workloads and nothing is pending:
    // when a policy change is reflected (bench/lib/risk-figures.js).
    'await-risks': ({ rejected, timeoutMs }) => awaitRejected(controller.risks, rejected, timeoutMs),
    'rejected-workloads': () => rejectedWorkloads(controller.risks),
    // What the heap holds, for bench/heap-summary.js (written after a full collection).
    'heap-snapshot': ({ file }) => {
      gc();
      return v8.writeHeapSnapshot(file);
    },
  });
  process.on('SIGTERM', () => controller.close().then(() => process.exit(0)));
  reportReady('servers/cluster-controller.js', {
    port: controller.port,
    readyMs,
    constraints: controller.index.totalConstraints(),
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
