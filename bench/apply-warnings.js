// @ts-check
'use strict';

// Issue 31: how many admission warning lines a `kubectl apply` of a manifest prints through
// Forewarn's webhook, without a cluster. The manifests directory is indexed as `forewarn check
// --manifests` indexes it, and each object the webhook is registered for gets the webhook's own
// question (`POST /api/v1/admission-check` with `view: warnings`, operation CREATE) and the webhook's
// own warning texts (buildWarnings). Usage, after `npm run build`:
//   node bench/apply-warnings.js [MANIFEST] [CLUSTER_DIR] [DIST]
// (defaults: examples/compliant-app.yaml, examples/manifests, ./dist). DIST lets the same script
// count with an older build, for a before/after figure. Prints the lines and their count per object.

const { readFileSync } = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const [manifest = 'examples/compliant-app.yaml', clusterDirectory = 'examples/manifests', dist = 'dist'] =
  process.argv.slice(2);
const load = (/** @type {string} */ module) => require(path.resolve(root, dist, module));

async function main() {
  const { loadOfflineCluster } = load('services/cli/offline-index');
  const { parseManifest } = load('services/controller/sources/manifest-parsing');
  const { buildAdmissionCheck } = load('services/controller/verdicts/admission-check');
  const { buildWarnings } = load('services/model/warnings');
  const { WEBHOOK_RESOURCES, pluralOfKind } = load('services/model/resources');
  const { groupOf } = load('services/model/kubernetes');

  const cluster = await loadOfflineCluster(path.resolve(root, clusterDirectory));
  const { objects } = parseManifest(manifest, readFileSync(path.resolve(root, manifest), 'utf8'), {
    defaultNamespace: 'default',
  });
  let total = 0;
  for (const object of objects) {
    const group = groupOf(object.apiVersion);
    const resource = pluralOfKind(object.kind);
    const watched = WEBHOOK_RESOURCES.some(
      (/** @type {{group: string, resource: string}} */ target) =>
        target.group === group && target.resource === resource,
    );
    const title = `${object.kind} ${object.metadata?.namespace}/${object.metadata?.name}`;
    if (!watched) {
      console.log(`${title}: not sent to the webhook`);
      continue;
    }
    const answer = buildAdmissionCheck(
      cluster.index,
      { object, operation: 'CREATE' },
      {
        view: 'warnings',
        prospective: cluster.findMissingCompanions(object, object.metadata?.namespace ?? 'default'),
      },
    );
    const warnings = buildWarnings(answer.constraints);
    total += warnings.length;
    console.log(`${title}: ${warnings.length} warning line(s)`);
    for (const warning of warnings) console.log(`  ${warning}`);
  }
  console.log(`total: ${total} warning line(s) for ${objects.length} objects`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
