// @ts-check
'use strict';

// Where Forewarn's CPU goes after a load, thread by thread (issue 33, the bursts at rest): the demo
// cluster's controller and the webhook in front of it, distinct reviews straight to the webhook for
// LOAD_SECONDS, then every thread's CPU from /proc/<pid>/task/*/stat each second for WATCH_SECONDS,
// and each process's RSS at the end. Node flags for both processes as a JSON array in argv[2], e.g.
// `node bench/after-load-cpu.js '["--trace-gc"]'` (V8's GC lines go to stdout between the samples)
// or '["--no-memory-reducer"]'. Figures and what they showed: docs/benchmarks.md.

const path = require('node:path');
const { readFileSync, readdirSync } = require('node:fs');
const { startProcess } = require('./lib/processes');
const { loadTest } = require('./lib/measure');
const { distinctDeploymentReviews } = require('./lib/admission-reviews');
const { generateSelfSignedBundle } = require('../dist/services/webhook/certs/self-signed');

const LOAD_SECONDS = Number(process.env.LOAD_SECONDS || 8);
const WATCH_SECONDS = Number(process.env.WATCH_SECONDS || 45);

/**
 * Milliseconds of CPU (Linux schedstat, nanosecond resolution) and voluntary sleeps of each thread of a
 * process so far, keyed `tid:name`. Clock ticks (10 ms) hid the sub-millisecond wake-ups at rest.
 * @param {number} pid
 */
function threadCpuMs(pid) {
  /** @type {Record<string, {ms: number, sleeps: number}>} */
  const threads = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const runNs = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      const sleeps = Number(/\nvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
      threads[`${tid}:${name}`] = { ms: runNs / 1e6, sleeps };
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return threads;
}

/** @param {number} pid */
function rssKilobytes(pid) {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
}

async function main() {
  const execArgv = process.argv[2] ? JSON.parse(process.argv[2]) : [];
  const bundle = await generateSelfSignedBundle({
    serviceName: 'forewarn-webhook',
    namespace: 'forewarn-system',
    extraSans: ['127.0.0.1'],
    now: new Date(),
  });
  const controller = await startProcess(
    'servers/controller.js',
    [JSON.stringify({ manifests: path.join(__dirname, '..', 'examples', 'manifests') })],
    { execArgv },
  );
  const webhook = await startProcess(
    'servers/webhook.js',
    [
      JSON.stringify({
        controllerUrl: `http://127.0.0.1:${controller.info.port}`,
        certificate: { certPem: bundle.certPem, keyPem: bundle.keyPem },
      }),
    ],
    { execArgv },
  );
  try {
    const pids = { controller: controller.child.pid ?? 0, webhook: webhook.child.pid ?? 0 };
    const reviews = distinctDeploymentReviews('shop');
    let sequence = 0;
    // The benchmark's own certificate: trusted for this process's requests only.
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    await loadTest({
      url: `https://127.0.0.1:${webhook.info.port}/validate`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      nextBody: () => reviews(sequence++),
      connections: 4,
      durationSeconds: LOAD_SECONDS,
    });
    console.log(`load done: ${sequence} reviews in ${LOAD_SECONDS} s; CPU per thread each second after it:`);
    const names = /** @type {const} */ (['controller', 'webhook']);
    const previous = { controller: threadCpuMs(pids.controller), webhook: threadCpuMs(pids.webhook) };
    const totals = { controller: { ms: 0, sleeps: 0 }, webhook: { ms: 0, sleeps: 0 } };
    for (let second = 1; second <= WATCH_SECONDS; second++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const busy = [];
      for (const name of names) {
        const now = threadCpuMs(pids[name]);
        for (const [thread, { ms, sleeps }] of Object.entries(now)) {
          const before = previous[name][thread] ?? { ms: 0, sleeps: 0 };
          const delta = ms - before.ms;
          if (delta >= 0.5) busy.push(`${name}/${thread} ${delta.toFixed(1)} ms`);
          totals[name].ms += Math.max(0, delta);
          totals[name].sleeps += Math.max(0, sleeps - before.sleeps);
        }
        previous[name] = now;
      }
      if (busy.length > 0) console.log(`+${second} s: ${busy.join(', ')}`);
    }
    for (const name of names)
      console.log(
        `${name}: ${totals[name].ms.toFixed(1)} ms of CPU over ${WATCH_SECONDS} s after the load ` +
          `(${(totals[name].ms / WATCH_SECONDS).toFixed(2)} ms/s, ${(totals[name].sleeps / WATCH_SECONDS).toFixed(1)} wake-ups/s), ` +
          `RSS ${Math.round(rssKilobytes(pids[name]) / 1024)} MiB`,
      );
  } finally {
    await webhook.stop();
    await controller.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
