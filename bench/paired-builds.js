// @ts-check
'use strict';

// Before and after on a shared machine (issue 33): the webhook and controller of two built checkouts
// (say main's and a branch's) run at the same time on the demo cluster (examples/manifests), and the
// load alternates between them in short slices of distinct `shop` Deployment reviews over HTTPS
// keep-alive, so that the other users' load hits both builds alike. Per build: CPU per review of
// webhook + controller (process.cpuUsage, every thread) and p50, summed over the slices.
//   node bench/paired-builds.js <before checkout> <after checkout> [--rounds=10] [--slice-ms=1000] [--connections=1,16]
// Each checkout must be built (`npm run build`); its own bench/servers run its own dist/.

const https = require('node:https');
const path = require('node:path');
const { generateSelfSignedBundle } = require('../dist/services/webhook/certs/self-signed');
const { distinctDeploymentReviews } = require('./lib/admission-reviews');
const { percentile } = require('./lib/measure');
const { startProcess } = require('./lib/processes');
const { postReviewsFor } = require('./lib/webhook-post');

const OPA = '/var/cache/forewarn-e2e/tools/opa-v1.22.3/opa';

/**
 * @param {string} checkout
 * @param {{certPem: string, keyPem: string}} certificate
 */
async function startBuild(checkout, certificate) {
  const root = path.resolve(checkout);
  const controller = await startProcess(
    /** @type {'servers/controller.js'} */ (path.join(root, 'bench/servers/controller.js')),
    [JSON.stringify({ manifests: path.join(root, 'examples/manifests'), opaPath: OPA })],
  );
  const webhook = await startProcess(
    /** @type {'servers/webhook.js'} */ (path.join(root, 'bench/servers/webhook.js')),
    [JSON.stringify({ controllerUrl: `http://127.0.0.1:${controller.info.port}`, certificate })],
  );
  /** CPU microseconds used so far by the webhook and by the controller. */
  const cpu = async () => {
    const [webhookUsage, controllerUsage] = await Promise.all([
      webhook.request({ type: 'cpu-usage' }),
      controller.request({ type: 'cpu-usage' }),
    ]);
    return [webhookUsage.user + webhookUsage.system, controllerUsage.user + controllerUsage.system];
  };
  const stop = async () => {
    await webhook.stop();
    await controller.stop();
  };
  return { checkout, port: webhook.info.port, cpu, stop };
}

async function main() {
  const [before, after] = process.argv.slice(2).filter((argument) => !argument.startsWith('--'));
  if (!before || !after)
    throw new Error('usage: node bench/paired-builds.js <before checkout> <after checkout>');
  const option = (/** @type {string} */ name, /** @type {string} */ fallback) =>
    process.argv.find((argument) => argument.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
  const rounds = Number(option('rounds', '10'));
  const sliceMs = Number(option('slice-ms', '1000'));
  const concurrencies = option('connections', '1,16').split(',').map(Number);
  const bundle = await generateSelfSignedBundle({
    serviceName: 'forewarn-webhook',
    namespace: 'forewarn-system',
    extraSans: ['127.0.0.1'],
    now: new Date(),
  });
  const certificate = { certPem: bundle.certPem, keyPem: bundle.keyPem };
  const builds = [await startBuild(before, certificate), await startBuild(after, certificate)];
  const nextReview = distinctDeploymentReviews('shop');
  let sequence = 0;
  /** @type {Array<Record<string, string | number>>} */
  const rows = [];
  try {
    for (const connections of concurrencies) {
      const agents = builds.map(
        () => new https.Agent({ keepAlive: true, maxSockets: connections, ca: bundle.caPem }),
      );
      const totals = builds.map(() => ({
        reviews: 0,
        webhookUs: 0,
        controllerUs: 0,
        latencies: /** @type {number[]} */ ([]),
      }));
      /** @param {number} side @param {number} durationMs @param {boolean} counted */
      const slice = async (side, durationMs, counted) => {
        const build = builds[side];
        const cpuBefore = await build.cpu();
        const latencies = await postReviewsFor({
          agent: agents[side],
          port: build.port,
          connections,
          durationMs,
          nextReview: () => nextReview(sequence++),
        });
        const cpuAfter = await build.cpu();
        if (!counted) return;
        totals[side].reviews += latencies.length;
        totals[side].webhookUs += cpuAfter[0] - cpuBefore[0];
        totals[side].controllerUs += cpuAfter[1] - cpuBefore[1];
        totals[side].latencies.push(...latencies);
      };
      // Warm-up, then the slices in turns, each round starting with the other build.
      for (const side of [0, 1]) await slice(side, 1000, false);
      for (let round = 0; round < rounds; round++)
        for (const side of round % 2 === 0 ? [0, 1] : [1, 0]) await slice(side, sliceMs, true);
      for (const agent of agents) agent.destroy();
      totals.forEach((total, side) => {
        const sorted = total.latencies.sort((left, right) => left - right);
        rows.push({
          checkout: builds[side].checkout,
          connections,
          reviews: total.reviews,
          webhookMicroseconds: Math.round(total.webhookUs / total.reviews),
          controllerMicroseconds: Math.round(total.controllerUs / total.reviews),
          totalMicroseconds: Math.round((total.webhookUs + total.controllerUs) / total.reviews),
          p50Ms: Number(percentile(sorted, 50).toFixed(2)),
        });
      });
    }
  } finally {
    for (const build of builds) await build.stop();
  }
  for (const row of rows) console.log(JSON.stringify(row));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
