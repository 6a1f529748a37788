// @ts-check
'use strict';

// The controller's tail under concurrent reviews (issue 33): what holds its main thread while the
// webhook sends it 16 reviews at once. Each variant is a webhook and controller pair on the demo
// cluster (examples/manifests) from a built checkout, the controller with its own Node flags (a
// young generation's size, say); the load alternates between the variants in short slices of
// distinct `shop` Deployment reviews straight to the webhook over HTTPS keep-alive, so the machine's
// other load hits them alike. Per variant, summed over its slices: latency p50/p99/max, CPU per
// review of the controller and of the webhook, the controller's garbage collections (count, total
// and largest pause by kind, from V8's own gc entries) and its event loop's delay, and its RSS at
// the end.
//   node bench/controller-tail.js '[{"label":"16 MB","checkout":".","nodeArgs":["--max-semi-space-size=16"]}, ...]'
//     [--rounds=6] [--slice-ms=1500] [--connections=16]
// A checkout defaults to this one; each must be built (`npm run build`).

const https = require('node:https');
const path = require('node:path');
const { z } = require('zod');
const { generateSelfSignedBundle } = require('../dist/services/webhook/certs/self-signed');
const { distinctDeploymentReviews } = require('./lib/admission-reviews');
const { percentile } = require('./lib/measure');
const { startProcess } = require('./lib/processes');
const { postReviewsFor } = require('./lib/webhook-post');

const OPA = '/var/cache/forewarn-e2e/tools/opa-v1.22.3/opa';
// As the Pulumi component sets it for the default 512Mi limit (infra/controller.ts).
const DEPLOYED_HEAP_LIMIT = '--max-old-space-size=384';

const Variants = z
  .array(
    z.object({
      label: z.string(),
      checkout: z.string().default(path.join(__dirname, '..')),
      nodeArgs: z.array(z.string()).default([]),
      // A `.heapprofile` of every allocation the controller made in the measured slices.
      allocationProfile: z.string().optional(),
    }),
  )
  .min(1);

/**
 * @param {z.infer<typeof Variants>[number]} variant
 * @param {{certPem: string, keyPem: string}} certificate
 */
async function startVariant(variant, certificate) {
  const root = path.resolve(variant.checkout);
  const controller = await startProcess(
    /** @type {'servers/controller.js'} */ (path.join(root, 'bench/servers/controller.js')),
    [JSON.stringify({ manifests: path.join(root, 'examples/manifests'), opaPath: OPA })],
    { execArgv: [DEPLOYED_HEAP_LIMIT, ...variant.nodeArgs] },
  );
  const webhook = await startProcess(
    /** @type {'servers/webhook.js'} */ (path.join(root, 'bench/servers/webhook.js')),
    [JSON.stringify({ controllerUrl: `http://127.0.0.1:${controller.info.port}`, certificate })],
  );
  const cpu = async () => {
    const [webhookUsage, controllerUsage] = await Promise.all([
      webhook.request({ type: 'cpu-usage' }),
      controller.request({ type: 'cpu-usage' }),
    ]);
    return [webhookUsage.user + webhookUsage.system, controllerUsage.user + controllerUsage.system];
  };
  return {
    variant,
    port: webhook.info.port,
    cpu,
    controller,
    stop: async () => {
      await webhook.stop();
      await controller.stop();
    },
  };
}

/**
 * @param {Record<string, {count: number, totalMs: number, maxMs: number, p99Ms: number}>} total
 * @param {Record<string, {count: number, totalMs: number, maxMs: number, p99Ms: number}>} slice
 */
function addPauses(total, slice) {
  for (const [kind, figures] of Object.entries(slice)) {
    const sum = total[kind] ?? { count: 0, totalMs: 0, maxMs: 0, p99Ms: 0 };
    sum.count += figures.count;
    sum.totalMs += figures.totalMs;
    sum.maxMs = Math.max(sum.maxMs, figures.maxMs);
    sum.p99Ms = Math.max(sum.p99Ms, figures.p99Ms);
    total[kind] = sum;
  }
}

/**
 * One variant's figures over its counted slices.
 * @param {Awaited<ReturnType<typeof startVariant>>} pair
 * @param {{reviews: number, webhookUs: number, controllerUs: number, latencies: number[], gc: Record<string, {count: number, totalMs: number, maxMs: number, p99Ms: number}>, loopDelayP99: number[], loopDelayMax: number}} total
 * @param {number} connections
 */
async function variantFigures(pair, total, connections) {
  const sorted = total.latencies.sort((left, right) => left - right);
  const memory = await pair.controller.request({ type: 'memory' });
  const perReview = (/** @type {number} */ value) => Number((value / total.reviews).toFixed(3));
  /** @type {Record<string, string>} */
  const gc = {};
  for (const [kind, figures] of Object.entries(total.gc))
    gc[kind] =
      `${figures.count} (${perReview(figures.count * 1000)} per 1,000 reviews), ` +
      `${figures.totalMs.toFixed(1)} ms (${perReview(figures.totalMs * 1000)} µs per review), largest ${figures.maxMs.toFixed(2)} ms`;
  const slicesP99 = [...total.loopDelayP99].sort((left, right) => left - right);
  return {
    label: pair.variant.label,
    connections,
    reviews: total.reviews,
    controllerMicroseconds: Math.round(total.controllerUs / total.reviews),
    webhookMicroseconds: Math.round(total.webhookUs / total.reviews),
    p50Ms: Number(percentile(sorted, 50).toFixed(2)),
    p99Ms: Number(percentile(sorted, 99).toFixed(2)),
    maxMs: Number(sorted[sorted.length - 1].toFixed(2)),
    controllerGc: gc,
    controllerLoopDelayMs: {
      p99MedianOfSlices: slicesP99[Math.floor(slicesP99.length / 2)],
      max: total.loopDelayMax,
    },
    controllerRssMiB: Math.round(memory.rssBytes / 1048576),
    controllerPeakRssMiB: Math.round(memory.peakRssBytes / 1048576),
    controllerHeapUsedMiB: Math.round(memory.heapUsedBytes / 1048576),
  };
}

async function main() {
  const variants = Variants.parse(JSON.parse(process.argv[2] ?? '[{"label":"this checkout"}]'));
  const option = (/** @type {string} */ name, /** @type {string} */ fallback) =>
    process.argv.find((argument) => argument.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
  const rounds = Number(option('rounds', '6'));
  const sliceMs = Number(option('slice-ms', '1500'));
  const connections = Number(option('connections', '16'));
  const bundle = await generateSelfSignedBundle({
    serviceName: 'forewarn-webhook',
    namespace: 'forewarn-system',
    extraSans: ['127.0.0.1'],
    now: new Date(),
  });
  const certificate = { certPem: bundle.certPem, keyPem: bundle.keyPem };
  /** @type {Array<Awaited<ReturnType<typeof startVariant>>>} */
  const pairs = [];
  for (const variant of variants) pairs.push(await startVariant(variant, certificate));
  const nextReview = distinctDeploymentReviews('shop');
  let sequence = 0;
  const agents = pairs.map(
    () => new https.Agent({ keepAlive: true, maxSockets: connections, ca: bundle.caPem }),
  );
  const totals = pairs.map(() => ({
    reviews: 0,
    webhookUs: 0,
    controllerUs: 0,
    latencies: /** @type {number[]} */ ([]),
    gc: /** @type {Record<string, {count: number, totalMs: number, maxMs: number, p99Ms: number}>} */ ({}),
    loopDelayP99: /** @type {number[]} */ ([]),
    loopDelayMax: 0,
  }));
  /** @param {number} side @param {number} durationMs @param {boolean} counted */
  const slice = async (side, durationMs, counted) => {
    const pair = pairs[side];
    await pair.controller.request({ type: 'loop-watch-start' });
    const cpuBefore = await pair.cpu();
    const latencies = await postReviewsFor({
      agent: agents[side],
      port: pair.port,
      connections,
      durationMs,
      nextReview: () => nextReview(sequence++),
    });
    const cpuAfter = await pair.cpu();
    const watched = await pair.controller.request({ type: 'loop-watch-take' });
    if (!counted) return;
    const total = totals[side];
    total.reviews += latencies.length;
    total.webhookUs += cpuAfter[0] - cpuBefore[0];
    total.controllerUs += cpuAfter[1] - cpuBefore[1];
    total.latencies.push(...latencies);
    addPauses(total.gc, watched.gc);
    total.loopDelayP99.push(watched.loopDelayMs.p99);
    total.loopDelayMax = Math.max(total.loopDelayMax, watched.loopDelayMs.max);
  };
  try {
    for (let side = 0; side < pairs.length; side++) await slice(side, 2000, false);
    for (const pair of pairs)
      if (pair.variant.allocationProfile)
        await pair.controller.request({ type: 'allocation-sampling-start', intervalBytes: 4096 });
    for (let round = 0; round < rounds; round++) {
      const order = pairs.map((_, side) => side);
      if (round % 2 === 1) order.reverse();
      for (const side of order) await slice(side, sliceMs, true);
    }
    for (const pair of pairs)
      if (pair.variant.allocationProfile)
        console.log(
          `allocations: ${await pair.controller.request({ type: 'allocation-sampling-take', file: path.resolve(pair.variant.allocationProfile) })}`,
        );
    for (let side = 0; side < pairs.length; side++)
      console.log(JSON.stringify(await variantFigures(pairs[side], totals[side], connections)));
  } finally {
    for (const agent of agents) agent.destroy();
    for (const pair of pairs) await pair.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
