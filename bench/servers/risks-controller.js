// @ts-check
'use strict';

// The real controller process (`--manifests DIR`, as bench/servers/controller.js) on namespaces of
// policies and Deployments, for the workloads-at-risk benchmark (bench/risks.js): it can keep the
// background evaluation of every workload running for a while, so that admission checks are
// measured during a full re-evaluation. argv[2]: JSON `{"namespaces": n, "constraints": per
// namespace, "deployments": per namespace}`.

const { mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startManifestsController } = require('../lib/manifests-controller');
const { namespaceObject, policyObjects, WORKLOAD_LABELS } = require('../lib/cluster-objects');
const { z } = require('zod');
const { reportReady, serveCommands } = require('../lib/processes');
const { reevaluateFor } = require('../lib/risk-commands');

/** @param {string} namespace @param {number} item */
function deployment(namespace, item) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `app-${item}`, namespace, labels: WORKLOAD_LABELS },
    spec: {
      replicas: 2,
      selector: { matchLabels: WORKLOAD_LABELS },
      template: {
        metadata: { labels: WORKLOAD_LABELS },
        spec: { containers: [{ name: 'app', image: `registry.example.com/app-${item}:1.0.0` }] },
      },
    },
  };
}

async function main() {
  const settings = z
    .object({ namespaces: z.number(), constraints: z.number(), deployments: z.number() })
    .parse(JSON.parse(process.argv[2]));
  const directory = mkdtempSync(path.join(os.tmpdir(), 'forewarn-bench-risks-'));
  for (let index = 0; index < settings.namespaces; index++) {
    const namespace = `bench-${index}`;
    const items = [namespaceObject(namespace), ...policyObjects(namespace, settings.constraints)];
    for (let item = 0; item < settings.deployments; item++) items.push(deployment(namespace, item));
    writeFileSync(
      path.join(directory, `${namespace}.json`),
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items }),
    );
  }
  const controller = await startManifestsController(directory);
  await controller.risks.idle();
  serveCommands({
    'cpu-usage': () => process.cpuUsage(),
    'risk-status': () => controller.risks.status(),
    // Full re-evaluations back to back for `seconds`: how many, and their CPU.
    reevaluate: ({ seconds }) => reevaluateFor(controller.risks, seconds),
  });
  process.on('exit', () => rmSync(directory, { recursive: true, force: true }));
  process.on('SIGTERM', () => controller.close().then(() => process.exit(0)));
  reportReady('servers/risks-controller.js', {
    port: controller.port,
    constraints: controller.index.totalConstraints(),
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
