// @ts-check
'use strict';
// Where Forewarn's CPU per admission goes at one client through the real API server (issue 33), thread
// by thread: the e2e tools' kube-apiserver, the bare webhook and Forewarn's pair (this checkout, or
// ROOT=<another built checkout>), distinct dryRun Deployment creates. Per phase: requests, p50/p99,
// the API server's connections to the webhook seen by `ss` (a reconnect per review would show many),
// and per thread of each process the CPU (ticks and schedstat run time) and the voluntary and
// involuntary context switches per request. Modes (environment):
//   default: ROUNDS of [bare, Forewarn through the API server, Forewarn straight to the webhook, and
//     straight at RATE reviews/s]; PERF=1 records `perf record -g` of each phase into $TMPDIR/forewarn-perf-<phase>.data
//     (with NODE_ARGS='["--perf-basic-prof"]' so JIT frames have names);
//   CURVE=<windows>: Forewarn only, CPU per admission in consecutive 2 s windows from its start (how it
//     falls as V8 compiles), after SLEEP_BEFORE seconds and an optional WARM=full|controller load
//     straight to the webhook or to the controller for WARM_SECONDS.
//   REPLAY=capture: also the API server's own bytes straight to the bare webhook and to Forewarn (one
//     review the API server sent, captured at start, each copy with its own name and uids);
//     REPLAY_FIRST=1 measures that before the API server's phase; BESIDE=1 adds Forewarn's paced straight
//     reviews while the API server admits creates through the bare webhook (its activity beside them);
//     STRACE=1 counts each process's system calls per request (`strace -c -f`; slows the processes).
// NODE_ARGS: node flags of Forewarn's two processes as a JSON array. Figures: docs/benchmarks.md,
// "One client through the API server".

const path = require('node:path');
const { readFileSync, readdirSync } = require('node:fs');
const { execFileSync } = require('node:child_process');
const { generateSelfSignedBundle } = require('../dist/services/webhook/certs/self-signed');
const { apiRequest, configure, deploymentText, startApiServer } = require('./lib/api-server-cluster');
const { namespaceObject } = require('./lib/cluster-objects');
const { loadTest } = require('./lib/measure');
const { startProcess } = require('./lib/processes');
const { distinctDeploymentReviews } = require('./lib/admission-reviews');
const { admissionCheckBody } = require('../dist/services/model/admission-query');
const { captureApiServerReview, replayedReviews, traceSyscalls } = require('./lib/one-client-probes');

const SECONDS = Number(process.env.SECONDS_PER || 6);
const CONNECTIONS = Number(process.env.CONNECTIONS || 1);
const execArgv = process.env.NODE_ARGS ? JSON.parse(process.env.NODE_ARGS) : [];
const ROOT = process.env.ROOT;

/** @typedef {{ms: number, runNs: number, vol: number, nonvol: number, migrations: number}} ThreadCpu */
/** @typedef {import('./lib/measure').LoadRequest & {overallRate?: number}} Side */
/** @typedef {import('./lib/api-server-cluster').ApiAccess} ApiAccess */
/** @typedef {Awaited<ReturnType<typeof startServers>>} Servers */

/**
 * @param {number} pid
 * @returns {Record<string, ThreadCpu>}
 */
function threadCpuMs(pid) {
  /** @type {Record<string, ThreadCpu>} */
  const threads = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      const vol = Number(/\nvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
      const nonvol = Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
      const sched = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ');
      const schedDetail = readFileSync(`/proc/${pid}/task/${tid}/sched`, 'utf8');
      const migrations = Number(/se\.nr_migrations\s+:\s+(\d+)/.exec(schedDetail)?.[1] ?? 0);
      threads[`${tid}:${name}`] = {
        ms: (Number(fields[11]) + Number(fields[12])) * 10,
        runNs: Number(sched[0]),
        vol,
        nonvol,
        migrations,
      };
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return threads;
}

/**
 * @param {Record<string, ThreadCpu>} before
 * @param {Record<string, ThreadCpu>} after
 * @param {number} requests
 */
function diff(before, after, requests) {
  const rows = [];
  for (const [key, value] of Object.entries(after)) {
    const was = before[key] ?? { ms: 0, runNs: 0, vol: 0, nonvol: 0, migrations: 0 };
    const runUs = (value.runNs - was.runNs) / 1000 / requests;
    if (runUs < 1) continue;
    rows.push({
      thread: key,
      tickMsPerReq: ((value.ms - was.ms) / requests).toFixed(3),
      schedUsPerReq: runUs.toFixed(1),
      volPerReq: ((value.vol - was.vol) / requests).toFixed(2),
      nonvolPerReq: ((value.nonvol - was.nonvol) / requests).toFixed(2),
      migrationsPerReq: ((value.migrations - was.migrations) / requests).toFixed(2),
    });
  }
  return rows;
}

/** @param {number} port */
function connectionsTo(port) {
  const out = execFileSync('ss', ['-tnH', 'state', 'established', `( sport = :${port} )`], {
    encoding: 'utf8',
  });
  return out
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => line.trim().split(/\s+/).pop() ?? '');
}

/**
 * @param {string} label
 * @param {Side} side
 * @param {Array<[string, number]>} pids
 * @param {number} port
 * @param {Side} [beside] reviews sent elsewhere at the same time
 */
async function measure(label, side, pids, port, beside) {
  await loadTest({ ...side, connections: CONNECTIONS, durationSeconds: 1 });
  const { spawn } = require('node:child_process');
  const perf = process.env.PERF
    ? spawn(
        'perf',
        [
          'record',
          '-F',
          '1999',
          '-g',
          '-o',
          path.join(require('node:os').tmpdir(), `forewarn-perf-${label}.data`),
          '-p',
          pids.map(([, pid]) => pid).join(','),
          '--',
          'sleep',
          String(SECONDS),
        ],
        { stdio: 'ignore' },
      )
    : undefined;
  const tracers = process.env.STRACE ? pids.map(([name, pid]) => traceSyscalls(label, name, pid)) : [];
  const before = Object.fromEntries(pids.map(([name, pid]) => [name, threadCpuMs(pid)]));
  const peers = new Set();
  const sampler = setInterval(() => {
    for (const peer of connectionsTo(port)) peers.add(peer);
  }, 200);
  // A marker between the processes' own output (NODE_ARGS '--trace-gc', '--trace-opt').
  console.log(`>> measured phase ${label} starts`);
  const besideLoad = beside
    ? loadTest({ ...beside, connections: CONNECTIONS, durationSeconds: SECONDS })
    : undefined;
  const result = await loadTest({ ...side, connections: CONNECTIONS, durationSeconds: SECONDS });
  const besideResult = await besideLoad;
  console.log(`>> measured phase ${label} ends`);
  if (besideResult)
    console.log(`   beside it: ${besideResult.requests} requests through the API server to the bare webhook`);
  clearInterval(sampler);
  if (perf) await new Promise((resolve) => perf.on('exit', resolve));
  const after = Object.fromEntries(pids.map(([name, pid]) => [name, threadCpuMs(pid)]));
  console.log(
    `\n== ${label}: ${result.requests} requests, p50 ${result.latencyMs.p50.toFixed(2)} p99 ${result.latencyMs.p99.toFixed(2)}, peer connections seen ${peers.size}`,
  );
  for (const tracer of tracers) await tracer.report(result.requests);
  let total = 0;
  for (const [name] of pids) {
    const rows = diff(before[name], after[name], result.requests);
    const sum = rows.reduce((s, r) => s + Number(r.schedUsPerReq), 0);
    total += sum;
    console.log(`-- ${name}: ${sum.toFixed(1)} us/req (schedstat)`);
    console.table(rows);
  }
  console.log(`TOTAL ${label}: ${total.toFixed(1)} us/req`);
}

/** The bare webhook and Forewarn's pair (this checkout's or ROOT's), with the certificate's CA. */
/** @param {Array<() => Promise<void>>} stops */
async function startServers(stops) {
  const bundle = await generateSelfSignedBundle({
    serviceName: 'forewarn-webhook',
    namespace: 'forewarn-system',
    extraSans: ['127.0.0.1'],
    now: new Date(),
  });
  const certificate = { certPem: bundle.certPem, keyPem: bundle.keyPem };
  const bare = await startProcess('servers/bare-https.js', [
    JSON.stringify({ certificate, answer: null, echoUid: true }),
  ]);
  stops.push(bare.stop);
  /**
   * @template {'servers/controller.js' | 'servers/webhook.js'} Script
   * @param {Script} script
   * @returns {Script}
   */
  const server = (script) => /** @type {Script} */ (ROOT ? path.join(ROOT, 'bench', script) : script);
  const manifests = path.join(__dirname, '..', 'examples', 'manifests');
  const opaPath = '/var/cache/forewarn-e2e/tools/opa-v1.22.3/opa';
  const controller = await startProcess(
    server('servers/controller.js'),
    [JSON.stringify({ manifests, opaPath })],
    { execArgv },
  );
  stops.push(controller.stop);
  const webhook = await startProcess(
    server('servers/webhook.js'),
    [JSON.stringify({ controllerUrl: `http://127.0.0.1:${controller.info.port}`, certificate })],
    { execArgv },
  );
  stops.push(webhook.stop);
  return { caPem: bundle.caPem, certificate, bare, controller, webhook };
}

let sequence = 0;
const reviews = distinctDeploymentReviews('shop');

/**
 * Distinct reviews straight to the webhook (no API server).
 * @param {{info: {port: number}}} webhook
 * @returns {Side}
 */
function straightTo(webhook) {
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
  return {
    url: `https://127.0.0.1:${webhook.info.port}/validate`,
    method: /** @type {const} */ ('POST'),
    headers: { 'content-type': 'application/json' },
    nextBody: () => reviews(sequence++),
  };
}

/** @type {{body: string, rawHeaders: string[]} | undefined} */
let capturedReview;

/**
 * REPLAY: the API server's captured review straight to a webhook (bare or Forewarn's).
 * @param {{info: {port: number}}} webhook
 * @returns {Side}
 */
function replayTo(webhook) {
  const captured = capturedReview ?? JSON.parse(readFileSync(String(process.env.REPLAY), 'utf8'));
  return replayedReviews(webhook.info.port, captured, () => sequence++);
}

/**
 * WARM=full|controller: a load straight to the webhook, or straight to the controller.
 * @param {Servers} servers
 */
async function warmBefore({ webhook, controller }) {
  const durationSeconds = Number(process.env.WARM_SECONDS || 4);
  if (process.env.WARM === 'full')
    await loadTest({ ...straightTo(webhook), connections: 1, durationSeconds });
  if (process.env.WARM !== 'controller') return;
  const next = () => {
    const review = JSON.parse(reviews(sequence++)).request;
    const identity = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop' };
    return admissionCheckBody('CREATE', review.object, null, identity, 'warnings', review.userInfo) ?? '';
  };
  await loadTest({
    url: `http://127.0.0.1:${controller.info.port}/api/v1/admission-check`,
    method: /** @type {const} */ ('POST'),
    headers: { 'content-type': 'application/json' },
    nextBody: next,
    connections: 1,
    durationSeconds,
  });
}

/**
 * CPU per admission of the pair (webhook + controller) in consecutive 2 s windows.
 * @param {ApiAccess} api
 * @param {Side} side
 * @param {Servers} servers
 */
async function curve(api, side, servers) {
  if (process.env.SLEEP_BEFORE)
    await new Promise((resolve) => setTimeout(resolve, Number(process.env.SLEEP_BEFORE) * 1000));
  await warmBefore(servers);
  const { webhook, controller, caPem } = servers;
  const webhookUrl = `https://127.0.0.1:${webhook.info.port}/validate`;
  await configure(api, { webhookUrl, caPem, namespace: 'shop', expectWarning: /owner/ });
  const pids = [Number(webhook.child.pid), Number(controller.child.pid)];
  let total = 0;
  const line = [];
  for (let window = 0; window < Number(process.env.CURVE); window++) {
    const before = pids.map((pid) => threadCpuMs(pid));
    const result = await loadTest({ ...side, connections: CONNECTIONS, durationSeconds: 2 });
    const split = pids.map((pid, index) => {
      let ownNs = 0;
      for (const [key, value] of Object.entries(threadCpuMs(pid)))
        ownNs += value.runNs - (before[index][key]?.runNs ?? 0);
      return ownNs / 1e6 / result.requests;
    });
    total += result.requests;
    const pair = (split[0] + split[1]).toFixed(2);
    line.push(
      `${total}:${pair}ms(w${split[0].toFixed(2)}+c${split[1].toFixed(2)})/p50 ${result.latencyMs.p50.toFixed(1)}`,
    );
  }
  console.log(`CURVE ${JSON.stringify(execArgv)} ${line.join('  ')}`);
}

/**
 * ROUNDS of: bare, Forewarn through the API server, straight, straight at RATE.
 * @param {ApiAccess} api
 * @param {Side} side
 * @param {Servers} servers
 */
async function rounds(api, side, { bare, webhook, controller, caPem }) {
  /** @type {Array<[string, number]>} */
  const pair = [
    ['webhook', Number(webhook.child.pid)],
    ['controller', Number(controller.child.pid)],
  ];
  for (let round = 0; round < Number(process.env.ROUNDS || 2); round++) {
    await configure(api, {
      webhookUrl: `https://127.0.0.1:${bare.info.port}/validate`,
      caPem,
      namespace: 'shop',
    });
    await measure('bare', side, [['bare', Number(bare.child.pid)]], bare.info.port);
    if (process.env.REPLAY)
      await measure('bare-replayed', replayTo(bare), [['bare', Number(bare.child.pid)]], bare.info.port);
    const webhookUrl = `https://127.0.0.1:${webhook.info.port}/validate`;
    // REPLAY_FIRST=1: the API server's bytes straight to the webhook before the API server's own
    // reviews, so neither phase profits from the other's compiling.
    if (process.env.REPLAY_FIRST)
      await measure(`forewarn-replayed-first${round}`, replayTo(webhook), pair, webhook.info.port);
    await configure(api, { webhookUrl, caPem, namespace: 'shop', expectWarning: /owner/ });
    await measure(`forewarn-api${round}`, side, pair, webhook.info.port);
    // API_ONLY=1: only the two phases through the API server, round after round.
    if (process.env.API_ONLY) continue;
    const straight = straightTo(webhook);
    if (process.env.REPLAY)
      await measure(`forewarn-replayed${round}`, replayTo(webhook), pair, webhook.info.port);
    await measure(`forewarn-straight${round}`, straight, pair, webhook.info.port);
    const paced = { ...straight, overallRate: Number(process.env.RATE || 250) };
    await measure(`forewarn-straight-paced${round}`, paced, pair, webhook.info.port);
    if (process.env.BESIDE) {
      // The same paced reviews straight to Forewarn while the API server admits creates through the
      // bare webhook: what the API server's activity alone does to Forewarn's CPU per review.
      await configure(api, {
        webhookUrl: `https://127.0.0.1:${bare.info.port}/validate`,
        caPem,
        namespace: 'shop',
      });
      await measure(`forewarn-paced-beside-api${round}`, paced, pair, webhook.info.port, side);
    }
  }
}

async function main() {
  const cluster = await startApiServer();
  if (!cluster) throw new Error('no e2e tools (kube-apiserver, etcd): see bench/peers.js');
  /** @type {Array<() => Promise<void>>} */
  const stops = [];
  try {
    const { api } = cluster;
    await apiRequest(api, 'POST', '/api/v1/namespaces', namespaceObject('shop'));
    const servers = await startServers(stops);
    if (process.env.REPLAY === 'capture')
      capturedReview = await captureApiServerReview(api, servers.certificate, servers.caPem);
    const runId = Date.now().toString(36);
    const side = {
      url: `${api.url}/apis/apps/v1/namespaces/shop/deployments?dryRun=All`,
      method: /** @type {const} */ ('POST'),
      headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json' },
      nextBody: () => deploymentText(`web-${runId}-${sequence++}`, 'shop'),
    };
    if (process.env.CURVE) await curve(api, side, servers);
    else await rounds(api, side, servers);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await cluster.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
