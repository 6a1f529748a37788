// @ts-check
'use strict';

// Issue 32: per engine, the worst event-loop hold and heap growth of one admission check of a
// hostile policy and object (the rows of the table), through the shared evaluator with the
// guard's default limits (the bounds: 100 ms, 64 MiB). An admission check is synchronous, so it
// holds the event loop for its wall time; the hold reported is that wall time less the time the
// thread waited for a CPU (Linux's run-queue wait, /proc/thread-self/schedstat), which on a busy
// machine is the scheduler's, not the check's; the wall time is reported beside it.
// `node bench/hostile.js engines` prints one JSON line.

const { execFileSync } = require('node:child_process');
const { readFileSync } = require('node:fs');
const path = require('node:path');
const { AdapterRegistry } = require('../../dist/services/controller/adapters/registry');
const { ConstraintIndex } = require('../../dist/services/controller/index/constraint-index');
const { Ingestor, ParseErrorCounter } = require('../../dist/services/controller/index/ingest');
const { buildAdmissionCheck } = require('../../dist/services/controller/verdicts/admission-check');
const { regoEngine } = require('../../dist/services/controller/verdicts/gatekeeper/rego-engine');
const { evaluationIsolate } = require('../../dist/services/controller/verdicts/guard/evaluation-isolate');

const NAMESPACE = 'bench';
const ROUNDS = 5;

/** @param {object[]} containers @param {Record<string, string>} [annotations] */
const pod = (containers, annotations = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'hostile', namespace: NAMESPACE, annotations },
  spec: { containers },
});
/** @param {number} count @param {string} [name] */
const containers = (count, name) =>
  Array.from({ length: count }, (_, index) => ({
    name: name ?? `c${index}`,
    image: 'registry.example/app:1',
  }));

/** @param {object} rule */
const kyverno = (rule) => ({
  apiVersion: 'kyverno.io/v1',
  kind: 'Policy',
  metadata: { name: 'hostile', namespace: NAMESPACE },
  spec: { rules: [{ name: 'hostile', match: { any: [{ resources: { kinds: ['Pod'] } }] }, ...rule }] },
});

/** @param {string} kind @param {string} rego */
const gatekeeper = (kind, rego) => [
  {
    apiVersion: 'templates.gatekeeper.sh/v1',
    kind: 'ConstraintTemplate',
    metadata: { name: kind.toLowerCase() },
    spec: { crd: { spec: { names: { kind } } }, targets: [{ target: 'admission.k8s.gatekeeper.sh', rego }] },
  },
  {
    apiVersion: 'constraints.gatekeeper.sh/v1beta1',
    kind,
    metadata: { name: `${kind.toLowerCase()}-all` },
    spec: { match: { kinds: [{ apiGroups: [''], kinds: ['Pod'] }] } },
  },
];

/** @type {Record<string, {documents: import("../../dist/services/model/kubernetes").KubernetesObject[], object: import("../../dist/services/model/kubernetes").KubernetesObject}>} */
const ENGINES = {
  'kyverno substitution': {
    documents: [
      kyverno({
        validate: {
          message: 'image {{request.object.spec.containers[0].image}} is not trusted',
          pattern: { spec: { containers: [{ image: 'registry.corp.example/*' }] } },
        },
      }),
    ],
    object: pod([{ name: 'app', image: '{{request.object.metadata.annotations.x}}'.repeat(16) }], {
      x: '$`$`',
    }),
  },
  jmespath: {
    documents: [
      kyverno({
        context: [
          { name: 'v0', variable: { value: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' } },
          ...Array.from({ length: 24 }, (_, index) => ({
            name: `v${index + 1}`,
            variable: { jmesPath: `[v${index}, v${index}]` },
          })),
        ],
        validate: {
          message: 'long',
          deny: {
            conditions: { any: [{ key: '{{ length(to_string(v24)) }}', operator: 'GreaterThan', value: 0 }] },
          },
        },
      }),
    ],
    object: pod(containers(2)),
  },
  'cel compile': {
    documents: [
      kyverno({
        validate: {
          cel: {
            expressions: [
              {
                expression: Array.from(
                  { length: 20_000 },
                  (_, index) => `object.metadata.name != "n${index}"`,
                ).join(' && '),
              },
            ],
          },
        },
      }),
    ],
    object: pod(containers(2)),
  },
  'cel evaluation': {
    documents: [
      kyverno({
        validate: {
          cel: {
            expressions: [
              {
                expression:
                  'object.spec.containers.map(a, object.spec.containers.map(b, object.spec.containers.map(c, a.name + b.name + c.name))).size() > 0',
              },
            ],
          },
        },
      }),
    ],
    object: pod(containers(200)),
  },
  'rego quadratic': {
    documents: gatekeeper(
      'K8sUniqueNames',
      `package k8suniquenames
violation[{"msg": msg}] {
  c := input.review.object.spec.containers[i]
  d := input.review.object.spec.containers[j]
  i != j
  c.name == d.name
  msg := sprintf("container name %v is used twice", [c.name])
}`,
    ),
    object: pod(containers(3_000, 'same')),
  },
  'rego loop': {
    documents: gatekeeper(
      'K8sLooping',
      `package k8slooping
violation[{"msg": msg}] {
  n := count([x | x := numbers.range(1, 100000000)[_]; x > 0])
  n < 0
  msg := "never"
}`,
    ),
    object: pod(containers(2)),
  },
  'rego sprintf width': {
    documents: gatekeeper(
      'K8sWide',
      `package k8swide
violation[{"msg": msg}] {
  msg := sprintf("%200000000v", [input.review.object.metadata.name])
}`,
    ),
    object: pod(containers(2)),
  },
};

function opaPath() {
  if (process.env.FOREWARN_OPA_BIN) return process.env.FOREWARN_OPA_BIN;
  const output = execFileSync('bash', [path.join(__dirname, '../../tools/build-opa.sh')], {
    encoding: 'utf8',
  });
  return (output.trim().split('\n').pop() ?? '').replace(/^FOREWARN_OPA_BIN=/, '');
}

/** Milliseconds this thread has waited for a CPU while runnable; 0 where Linux does not say. */
function runQueueWaitMilliseconds() {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[1]) / 1e6 || 0;
  } catch {
    return 0;
  }
}

/** @param {import("../../dist/services/model/kubernetes").KubernetesObject[]} documents */
function indexOf(documents) {
  const index = new ConstraintIndex();
  const ingestor = new Ingestor(index, new AdapterRegistry(), new ParseErrorCounter());
  for (const document of [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
    ...documents,
  ])
    ingestor.upsert(document);
  return index;
}

async function main() {
  regoEngine.configure(opaPath());
  await evaluationIsolate.started();
  /** @type {Record<string, {worstHoldMilliseconds: number, worstWallMilliseconds: number, worstHeapGrowthMegabytes: number, verdicts: string[]}>} */
  const engines = {};
  for (const [engine, { documents, object }] of Object.entries(ENGINES)) {
    const index = indexOf(documents);
    buildAdmissionCheck(index, { object: pod(containers(1)), operation: 'CREATE' });
    await regoEngine.settled();
    let worstHold = 0;
    let worstWall = 0;
    let worstGrowth = 0;
    /** @type {string[]} */
    let verdicts = [];
    for (let round = 0; round < ROUNDS; round++) {
      const heapBefore = process.memoryUsage().heapUsed;
      const started = performance.now();
      const waitedBefore = runQueueWaitMilliseconds();
      const answer = buildAdmissionCheck(index, { object, operation: 'CREATE' });
      const wall = performance.now() - started;
      worstWall = Math.max(worstWall, wall);
      worstHold = Math.max(worstHold, wall - (runQueueWaitMilliseconds() - waitedBefore));
      worstGrowth = Math.max(worstGrowth, process.memoryUsage().heapUsed - heapBefore);
      verdicts = answer.constraints.map((constraint) => constraint.verdict);
      // As admissions a moment apart: a replaced isolate's standby has started.
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    engines[engine] = {
      worstHoldMilliseconds: Math.round(worstHold * 10) / 10,
      worstWallMilliseconds: Math.round(worstWall * 10) / 10,
      worstHeapGrowthMegabytes: Math.round((worstGrowth / (1024 * 1024)) * 10) / 10,
      verdicts,
    };
  }
  console.log(
    JSON.stringify({ rounds: ROUNDS, holdBoundMilliseconds: 100, heapBoundMegabytes: 64, engines }),
  );
  await evaluationIsolate.stop();
  process.exit(0);
}

module.exports = { main, ENGINES };
