// @ts-check
'use strict';

// What each admission webhook adds to a `kubectl apply` (issue 33): the real kube-apiserver of the e2e
// tools, distinct Deployment creates with dryRun=All in namespace `shop`, each webhook registered
// alone the same way (Ignore, 5 s, apps/deployments CREATE). Cases: no webhook; a bare HTTPS webhook
// that allows everything (the floor); the same webhook posting each review's object to a bare backend
// first (`bare-pair`: the floor of the spec's two-process design); Gatekeeper's own webhook with one
// policy requiring an `owner` label in `warn` mode, once as the demo's CEL template and once as the
// same policy in Rego; Forewarn's webhook and controller on the demo cluster (examples/manifests: its
// constraints of `shop` plus the same owner policy). Per case: p50/p99 at 1 and 16 clients, CPU per
// admission of the case's own processes (from /proc, so Go and Node are charged alike), and CPU per
// second at rest. Cases run in palindromic order so drift in the shared machine's load hits each
// alike. Skips a peer whose binary is not cached.
// Kyverno's admission controller with the same policy as a ClusterPolicy in Audit with emitWarning
// (bench/lib/kyverno-webhook.js; what it would register itself goes to the notes).

const { readFileSync } = require('node:fs');
const path = require('node:path');
const { parseAllDocuments } = require('yaml');
const { generateSelfSignedBundle } = require('../dist/services/webhook/certs/self-signed');
const {
  TOOLS_MISSING,
  apiRequest,
  configure,
  deploymentText,
  startApiServer,
} = require('./lib/api-server-cluster');
const { gatekeeperBinary, startGatekeeperWebhook, waitForCrd } = require('./lib/gatekeeper-webhook');
const { POLICY_NAME, kyvernoWebhookBinary, startKyvernoWebhook } = require('./lib/kyverno-webhook');
const { namespaceObject } = require('./lib/cluster-objects');
const { loadTest, median } = require('./lib/measure');
const { measureCpu, processCpuSeconds } = require('./lib/process-cpu');
const { startProcess } = require('./lib/processes');
const { barePairCase, forewarnCase } = require('./lib/node-peer-cases');

const NAMESPACE = 'shop';
const DEMO_MANIFESTS = path.join(__dirname, '..', 'examples', 'manifests');
// At rest is a minute, 5 s after the last load: V8 settles its heaps (the main thread's and each
// worker's) in bursts 5-30 s after a load, which a 10 s window caught or missed by chance.
const IDLE_SECONDS = 60;
const SETTLE_SECONDS = 5;
// Before its first measured run at each concurrency, each case takes this much load: the figures are
// of webhooks that have served for a while (a JIT runtime's first seconds, V8 compiling the hot
// paths, would otherwise land in whichever run comes first: 1.5-2× the case's later runs, for the bare
// Node webhook as for Forewarn). Every case gets the same, Go or Node.
const WARM_UP_SECONDS = 5;
// FOREWARN_PEERS_CASES=bare,gatekeeper-cel,forewarn-baseline,forewarn: only these cases (the bare
// webhook always, every figure is over it), for a quicker before-and-after run on a busy machine.
const WANTED_CASES = process.env.FOREWARN_PEERS_CASES?.split(',').map((name) => name.trim());
/** @param {string} name */
const wanted = (name) => name === 'bare' || !WANTED_CASES || WANTED_CASES.includes(name);
// FOREWARN_PEERS_INSIDE=1: per run, where a review's time went inside the cases that can tell
// (Forewarn's: time in the webhook, in the controller query, each main thread's loop delay and GC
// pauses, the connections the API server opened). Off by default: the loop-delay timer and the
// per-review timing cost a little CPU. The bench's webhook server reads it too (inherited).
const INSIDE = process.env.FOREWARN_PEERS_INSIDE === '1';

/** @typedef {'none' | 'bare' | 'bare-pair' | 'gatekeeper-cel' | 'gatekeeper-rego' | 'kyverno' | 'forewarn-baseline' | 'forewarn'} CaseName */
/**
 * @typedef {object} PeerCase
 * @property {string} [webhookUrl]
 * @property {string} [caPem] the CA of the webhook's certificate, when not the benchmark's own
 * @property {number[]} pids the processes whose CPU the case costs
 * @property {RegExp} [expectWarning] a warning that shows the case's webhook is in effect
 * @property {RegExp} [forbidWarning] a warning that shows another case's policy is still in effect
 * @property {() => Promise<void>} [prepare] puts the case's policy in place
 * @property {{start: () => Promise<void>, take: () => Promise<import('./lib/node-peer-cases').InsideFigures>}} [inside] where a
 *   review's time goes inside the case's processes, asked for with FOREWARN_PEERS_INSIDE=1
 */

/** The demo's owner-label template (CEL), and the same policy as a Rego template of our own. */
function ownerTemplates() {
  const demo = parseAllDocuments(readFileSync(path.join(DEMO_MANIFESTS, 'gatekeeper.yaml'), 'utf8'))
    .map((document) => document.toJSON())
    .find((object) => object?.kind === 'ConstraintTemplate' && object.metadata?.name === 'k8srequiredlabels');
  if (!demo)
    throw new Error('examples/manifests/gatekeeper.yaml has no ConstraintTemplate k8srequiredlabels');
  const rego = {
    apiVersion: 'templates.gatekeeper.sh/v1',
    kind: 'ConstraintTemplate',
    metadata: { name: 'k8srequiredlabelsrego' },
    spec: {
      crd: { spec: { names: { kind: 'K8sRequiredLabelsRego' }, validation: demo.spec.crd.spec.validation } },
      targets: [
        {
          target: 'admission.k8s.gatekeeper.sh',
          rego: [
            'package k8srequiredlabelsrego',
            '',
            'violation[{"msg": msg}] {',
            '  required := {key | key := input.parameters.labels[_].key}',
            '  provided := {key | input.review.object.metadata.labels[key]}',
            '  missing := required - provided',
            '  count(missing) > 0',
            '  msg := sprintf("you must provide labels: %v", [concat(", ", sort(missing))])',
            '}',
          ].join('\n'),
        },
      ],
    },
  };
  return { cel: demo, rego };
}

/** The owner constraint of one template, in `warn` so the creates succeed and are warned. */
function ownerConstraint(/** @type {string} */ kind, /** @type {string} */ name) {
  return {
    apiVersion: 'constraints.gatekeeper.sh/v1beta1',
    kind,
    metadata: { name },
    spec: {
      enforcementAction: 'warn',
      match: { kinds: [{ apiGroups: ['apps'], kinds: ['Deployment'] }], namespaces: [NAMESPACE] },
      parameters: { labels: [{ key: 'owner' }] },
    },
  };
}

/**
 * Measures every case at one concurrency, in palindromic order, `rounds` times over: each figure is
 * the median of a case's 2 × rounds runs (two copies of one build differ by 20% between runs at
 * some hours, more than the margins the targets are decided by), with the range of its CPU beside it.
 * @param {import('./lib/api-server-cluster').ApiAccess} api
 * @param {Partial<Record<CaseName, PeerCase>>} cases
 * @param {string} caPem
 * @param {{connections: number, durationSeconds: number, rounds: number}} load
 */
async function measureConcurrency(api, cases, caPem, { connections, durationSeconds, rounds }) {
  let sequence = 0;
  const runId = Date.now().toString(36);
  const side = {
    url: `${api.url}/apis/apps/v1/namespaces/${NAMESPACE}/deployments?dryRun=All`,
    method: /** @type {const} */ ('POST'),
    headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json' },
    nextBody: () => deploymentText(`web-${runId}-${connections}-${sequence++}`, NAMESPACE),
  };
  const order = /** @type {CaseName[]} */ (Object.keys(cases));
  /** @type {Partial<Record<CaseName, {latency: import('./lib/measure').LoadResult, cpuMsPerAdmission: number, inside?: import('./lib/node-peer-cases').InsideFigures}[]>>} */
  const runs = {};
  const palindrome = [...order, ...[...order].reverse()];
  const warmedUp = new Set();
  for (const name of Array.from({ length: rounds }, () => palindrome).flat()) {
    const peer = /** @type {PeerCase} */ (cases[name]);
    await peer.prepare?.();
    await configure(api, {
      webhookUrl: peer.webhookUrl,
      caPem: peer.caPem ?? caPem,
      namespace: NAMESPACE,
      expectWarning: peer.expectWarning,
      forbidWarning: peer.forbidWarning,
    });
    await loadTest({ ...side, connections, durationSeconds: warmedUp.has(name) ? 1 : WARM_UP_SECONDS });
    warmedUp.add(name);
    const inside = INSIDE ? peer.inside : undefined;
    await inside?.start();
    const { result, cpuSeconds } = await measureCpu(peer.pids, () =>
      loadTest({ ...side, connections, durationSeconds }),
    );
    const insideFigures = await inside?.take();
    if (result.errors + result.non2xx + result.failures > 0 || result.requests === 0)
      throw new Error(
        `${name} at ${connections} clients: ${result.failures + result.non2xx} failed, ${result.errors} errors`,
      );
    (runs[name] ??= []).push({
      latency: result,
      cpuMsPerAdmission: (cpuSeconds * 1000) / result.requests,
      ...(insideFigures ? { inside: insideFigures } : {}),
    });
  }
  /** @type {Partial<Record<CaseName, {p50Ms: number, p90Ms: number, p99Ms: number, p99MsPerRun: number[], requestsPerSecond: number, cpuMsPerAdmission: number, cpuMsRange: [number, number], cpuMsPerRun: number[], runs: number, insidePerRun?: import('./lib/node-peer-cases').InsideFigures[]}>>} */
  const figures = {};
  for (const name of order) {
    const caseRuns = runs[name] ?? [];
    const cpu = caseRuns.map((run) => run.cpuMsPerAdmission);
    figures[name] = {
      p50Ms: median(caseRuns.map((run) => run.latency.latencyMs.p50)),
      p90Ms: median(caseRuns.map((run) => run.latency.latencyMs.p90)),
      p99Ms: median(caseRuns.map((run) => run.latency.latencyMs.p99)),
      p99MsPerRun: caseRuns.map((run) => Number(run.latency.latencyMs.p99.toFixed(2))),
      requestsPerSecond: median(caseRuns.map((run) => run.latency.requestsPerSecond)),
      cpuMsPerAdmission: median(cpu),
      cpuMsRange: [Math.min(...cpu), Math.max(...cpu)],
      cpuMsPerRun: cpu,
      runs: caseRuns.length,
      ...(caseRuns.some((run) => run.inside)
        ? { insidePerRun: caseRuns.flatMap((run) => (run.inside ? [run.inside] : [])) }
        : {}),
    };
  }
  return { connections, figures };
}

/**
 * CPU of each case's processes at rest (no request), measured together, sampled every second: the
 * mean over the window in ms per second, and the largest one-second burst in ms.
 * @param {Partial<Record<CaseName, PeerCase>>} cases
 * @returns {Promise<Partial<Record<CaseName, {msPerSecond: number, maxBurstMs: number}>>>}
 */
async function measureIdle(cases) {
  const entries = Object.entries(cases);
  const cpuOf = (/** @type {PeerCase} */ peer) =>
    peer.pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);
  const started = process.hrtime.bigint();
  const first = entries.map(([, peer]) => cpuOf(peer));
  const previous = [...first];
  const maxBurstMs = entries.map(() => 0);
  for (let second = 0; second < IDLE_SECONDS; second++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    entries.forEach(([, peer], index) => {
      const now = cpuOf(peer);
      maxBurstMs[index] = Math.max(maxBurstMs[index], (now - previous[index]) * 1000);
      previous[index] = now;
    });
  }
  const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  return Object.fromEntries(
    entries.map(([name], index) => [
      name,
      { msPerSecond: ((previous[index] - first[index]) * 1000) / wallSeconds, maxBurstMs: maxBurstMs[index] },
    ]),
  );
}

/**
 * Gatekeeper's webhook with the owner policy as a CEL and as a Rego template, one constraint at a time;
 * none when its manager is not cached (the reason goes to `notes`).
 * @param {{kubectlPath: string, kubeconfigPath: string}} cluster
 * @param {{certPem: string, keyPem: string}} certificate
 * @param {Array<() => Promise<void>>} stops
 * @param {string[]} notes
 * @returns {Promise<Partial<Record<CaseName, PeerCase>>>}
 */
async function gatekeeperCases(cluster, certificate, stops, notes) {
  const gatekeeper = gatekeeperBinary();
  if ('missing' in gatekeeper) {
    notes.push(gatekeeper.missing);
    return {};
  }
  const webhook = await startGatekeeperWebhook(cluster, certificate, gatekeeper.binary);
  stops.push(webhook.stop);
  const templates = ownerTemplates();
  await webhook.kubectl(['apply', '-f', '-'], [templates.cel, templates.rego]);
  for (const crd of ['k8srequiredlabels', 'k8srequiredlabelsrego'])
    await waitForCrd(webhook.kubectl, `${crd}.constraints.gatekeeper.sh`);
  const constraints = {
    cel: ownerConstraint('K8sRequiredLabels', 'owner-cel'),
    rego: ownerConstraint('K8sRequiredLabelsRego', 'owner-rego'),
  };
  /** @param {'cel' | 'rego'} engine */
  const only = (engine) => async () => {
    const other = constraints[engine === 'cel' ? 'rego' : 'cel'];
    await webhook.kubectl(['delete', other.kind.toLowerCase(), other.metadata.name, '--ignore-not-found']);
    await webhook.kubectl(['apply', '-f', '-'], [constraints[engine]]);
  };
  const common = { webhookUrl: webhook.url, pids: [webhook.pid] };
  return {
    'gatekeeper-cel': {
      ...common,
      expectWarning: /\[owner-cel\]/,
      forbidWarning: /\[owner-rego\]/,
      prepare: only('cel'),
    },
    'gatekeeper-rego': {
      ...common,
      expectWarning: /\[owner-rego\]/,
      forbidWarning: /\[owner-cel\]/,
      prepare: only('rego'),
    },
  };
}

/**
 * Kyverno's admission controller with the owner policy; none when it is not cached (the reason goes
 * to `notes`, as do the webhooks Kyverno registers itself).
 * @param {{kubectlPath: string, kubeconfigPath: string}} cluster
 * @param {Array<() => Promise<void>>} stops
 * @param {string[]} notes
 * @returns {Promise<Partial<Record<CaseName, PeerCase>>>}
 */
async function kyvernoCases(cluster, stops, notes) {
  const kyverno = kyvernoWebhookBinary();
  if ('missing' in kyverno) {
    notes.push(kyverno.missing);
    return {};
  }
  const webhook = await startKyvernoWebhook(cluster, kyverno.binary, NAMESPACE);
  stops.push(webhook.stop);
  notes.push(...webhook.notes);
  const warning = new RegExp(POLICY_NAME);
  return {
    kyverno: { webhookUrl: webhook.url, caPem: webhook.caPem, pids: [webhook.pid], expectWarning: warning },
  };
}

/**
 * FOREWARN_BENCH_BASELINE_FLAGS: a JSON array of strings.
 * @param {string} text
 * @returns {string[]}
 */
function nodeFlagsFrom(text) {
  const flags = JSON.parse(text);
  if (!Array.isArray(flags) || !flags.every((flag) => typeof flag === 'string'))
    throw new Error(`FOREWARN_BENCH_BASELINE_FLAGS must be a JSON array of strings, got ${text}`);
  return flags;
}

/**
 * @param {{durationSeconds: number, rounds?: number, concurrencies?: number[]}} options
 */
async function runPeersBenchmark({ durationSeconds, rounds = 2, concurrencies = [1, 16] }) {
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`--rounds must be a whole number of at least 1, got ${rounds}`);
  const cluster = await startApiServer();
  if (!cluster) return { skipped: TOOLS_MISSING };
  /** @type {Array<() => Promise<void>>} */
  const stops = [];
  /** @type {string[]} */
  const notes = [];
  try {
    const { api } = cluster;
    const created = await apiRequest(api, 'POST', '/api/v1/namespaces', namespaceObject(NAMESPACE));
    if (created.status !== 201) throw new Error(`namespace not created: ${JSON.stringify(created.body)}`);
    const bundle = await generateSelfSignedBundle({
      serviceName: 'forewarn-webhook',
      namespace: 'forewarn-system',
      extraSans: ['127.0.0.1'],
      now: new Date(),
    });
    const certificate = { certPem: bundle.certPem, keyPem: bundle.keyPem };
    /** @type {Partial<Record<CaseName, PeerCase>>} */
    const cases = wanted('none') ? { none: { pids: [] } } : {};

    const bare = await startProcess('servers/bare-https.js', [
      JSON.stringify({ certificate, answer: null, echoUid: true }),
    ]);
    stops.push(bare.stop);
    cases.bare = { webhookUrl: `https://127.0.0.1:${bare.info.port}/validate`, pids: [bare.child.pid ?? 0] };
    // FOREWARN_PEERS_BARE_PAIR_WORK='{"spinMicroseconds": 300, "workers": 0}': the floor's backend
    // spends that much CPU per review (bench/servers/bare-backend.js), to see how the tail grows with it.
    const backendWork = JSON.parse(process.env.FOREWARN_PEERS_BARE_PAIR_WORK ?? '{}');
    if (wanted('bare-pair')) cases['bare-pair'] = await barePairCase(certificate, stops, backendWork);

    if (wanted('gatekeeper-cel') || wanted('gatekeeper-rego')) {
      const gatekeeper = await gatekeeperCases(cluster, certificate, stops, notes);
      if (!wanted('gatekeeper-cel')) delete gatekeeper['gatekeeper-cel'];
      if (!wanted('gatekeeper-rego')) delete gatekeeper['gatekeeper-rego'];
      Object.assign(cases, gatekeeper);
    }
    if (wanted('kyverno')) Object.assign(cases, await kyvernoCases(cluster, stops, notes));

    // FOREWARN_BENCH_BASELINE=<another built checkout, e.g. main's>: its Forewarn in the same run.
    // FOREWARN_BENCH_BASELINE_FLAGS='["--flag", ...]': the baseline's processes start with these Node
    // flags instead of the deployed ones (infra/node-flags.ts); the baseline is this checkout unless
    // FOREWARN_BENCH_BASELINE names another.
    const baselineFlags = process.env.FOREWARN_BENCH_BASELINE_FLAGS;
    const baseline =
      process.env.FOREWARN_BENCH_BASELINE ?? (baselineFlags ? path.join(__dirname, '..') : undefined);
    if (baseline && wanted('forewarn-baseline'))
      cases['forewarn-baseline'] = await forewarnCase(
        certificate,
        stops,
        baseline,
        baselineFlags ? nodeFlagsFrom(baselineFlags) : undefined,
      );
    cases.forewarn = await forewarnCase(certificate, stops);
    const warningsPerCreate = await configure(api, {
      webhookUrl: cases.forewarn.webhookUrl,
      caPem: bundle.caPem,
      namespace: NAMESPACE,
      expectWarning: /owner/,
    });
    const rows = [];
    for (const connections of concurrencies)
      rows.push(await measureConcurrency(api, cases, bundle.caPem, { connections, durationSeconds, rounds }));
    // At rest as in a cluster between deploys: after the load, once the processes have settled.
    await configure(api, { caPem: bundle.caPem, namespace: NAMESPACE });
    await new Promise((resolve) => setTimeout(resolve, SETTLE_SECONDS * 1000));
    const idle = await measureIdle(cases);
    return {
      kubernetesVersion: cluster.kubernetesVersion,
      rounds,
      rows,
      idle,
      idleSeconds: IDLE_SECONDS,
      settleSeconds: SETTLE_SECONDS,
      warningsPerCreate,
      notes,
    };
  } finally {
    for (const stop of stops.reverse()) await stop().catch((error) => console.error(error.message));
    await cluster.stop();
  }
}

module.exports = { runPeersBenchmark };
