// @ts-check
'use strict';

// The real controller process as `npm start` runs it (`--manifests DIR`: runtime, manifests source,
// Ingestor, adapters, index, HTTP app with helmet and metrics), on a temporary directory of
// synthetic objects. argv[2]: JSON `{"namespaces": {"<name>": <constraint count>}, "manifests"?: "<dir>",
// "opaPath"?: "<opa binary>"}`: with `manifests`, that directory's files are read as well (the demo
// cluster's, for the peer benchmark); with `opaPath`, Rego templates are compiled as in the image.

const { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startManifestsController } = require('../lib/manifests-controller');
const { namespaceObject, policyObjects } = require('../lib/cluster-objects');
const { z } = require('zod');
const { reportReady, serveCommands } = require('../lib/processes');
const { createLoopWatch } = require('../lib/loop-watch');
const { createAllocationSampling } = require('../lib/allocation-sampling');

async function main() {
  const settings = z
    .object({
      namespaces: z.record(z.number()).optional(),
      manifests: z.string().optional(),
      opaPath: z.string().optional(),
    })
    .parse(JSON.parse(process.argv[2] || '{}'));
  const directory = mkdtempSync(path.join(os.tmpdir(), 'forewarn-bench-'));
  if (settings.manifests) cpSync(settings.manifests, path.join(directory, 'manifests'), { recursive: true });
  // One file per namespace, a `List` as `kubectl get -o json` writes it.
  for (const [namespace, count] of Object.entries(settings.namespaces || {})) {
    const list = {
      apiVersion: 'v1',
      kind: 'List',
      items: [namespaceObject(namespace), ...policyObjects(namespace, count)],
    };
    writeFileSync(path.join(directory, `${namespace}.json`), JSON.stringify(list));
  }
  const controller = await startManifestsController(
    directory,
    settings.opaPath ? ['--opa-path', settings.opaPath] : [],
  );
  const loopWatch = createLoopWatch();
  /** @type {ReturnType<typeof createAllocationSampling> | undefined} */
  let allocationSampling;
  serveCommands({
    'cpu-usage': () => process.cpuUsage(),
    'loop-watch-start': () => {
      loopWatch.start();
      return null;
    },
    'loop-watch-take': () => loopWatch.take(),
    'allocation-sampling-start': async ({ intervalBytes }) => {
      allocationSampling ??= createAllocationSampling();
      await allocationSampling.start(intervalBytes);
      return null;
    },
    'allocation-sampling-take': ({ file }) => {
      if (!allocationSampling) throw new Error('allocation sampling was not started');
      return allocationSampling.take(file);
    },
    memory: () => {
      const status = readFileSync('/proc/self/status', 'utf8');
      const kilobytes = (/** @type {string} */ field) =>
        Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
      const heap = process.memoryUsage();
      return {
        rssBytes: kilobytes('VmRSS'),
        peakRssBytes: kilobytes('VmHWM'),
        heapUsedBytes: heap.heapUsed,
        heapTotalBytes: heap.heapTotal,
        externalBytes: heap.external,
        constraints: controller.index.totalConstraints(),
      };
    },
  });
  process.on('exit', () => rmSync(directory, { recursive: true, force: true }));
  process.on('SIGTERM', () => controller.close().then(() => process.exit(0)));
  reportReady('servers/controller.js', {
    port: controller.port,
    constraints: controller.index.totalConstraints(),
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
