// @ts-check
'use strict';

// Gatekeeper verdicts (issue 23): CPU per admitted Deployment for a 20-constraint namespace whose
// constraints include 7 Gatekeeper ones — 5 in Rego, run on Open Policy Agent compiled to Wasm, and
// 2 in CEL — besides 13 of the other kinds, evaluated in this process with no HTTP around it.
// Also how long compiling the templates takes (a child process: the event loop's longest pause
// while they compile is measured too). Prints one JSON line; the budget is 500 µs of CPU per object.
// opa comes from FOREWARN_OPA_BIN or tools/build-opa.sh (warm: instant).

const { execFileSync } = require('node:child_process');
const { readFileSync } = require('node:fs');
const path = require('node:path');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const { parseAllDocuments } = require('yaml');
const { AdapterRegistry } = require('../dist/services/controller/adapters/registry');
const { ConstraintIndex } = require('../dist/services/controller/index/constraint-index');
const { Ingestor, ParseErrorCounter } = require('../dist/services/controller/index/ingest');
const { regoEngine } = require('../dist/services/controller/verdicts/gatekeeper/rego-engine');
const {
  compileTemplateOnArrival,
} = require('../dist/services/controller/verdicts/gatekeeper/template-preparation');
const { namespaceObject, policyObjects } = require('./lib/cluster-objects');
const { admittedDeployment, evaluateCpuMicros, verdictCounts } = require('./lib/admitted-deployment');

const NAMESPACE = 'bench';
const ITERATIONS = Number(process.argv[2] || 3000);
const TEMPLATES = path.join(__dirname, '../test/fidelity/gatekeeper/templates.yaml');

/**
 * @typedef {object} GatekeeperOutput
 * @property {number} constraints
 * @property {number} gatekeeperConstraints
 * @property {Record<string, number>} verdicts
 * @property {number} iterations
 * @property {number} evaluateCpuMicrosPerObject
 * @property {number} compileMilliseconds
 * @property {number} eventLoopMaxDelayMillisecondsWhileCompiling
 * @property {number} budgetMicros
 */

function opaPath() {
  if (process.env.FOREWARN_OPA_BIN) return process.env.FOREWARN_OPA_BIN;
  const output = execFileSync('bash', [path.join(__dirname, '../tools/build-opa.sh')], { encoding: 'utf8' });
  return (
    output
      .trim()
      .split('\n')
      .pop()
      ?.replace(/^FOREWARN_OPA_BIN=/, '') ?? ''
  );
}

/** @param {string} kind @param {string} name @param {Record<string, unknown>} [parameters] */
function constraint(kind, name, parameters) {
  return {
    apiVersion: 'constraints.gatekeeper.sh/v1beta1',
    kind,
    metadata: { name },
    spec: {
      match: { kinds: [{ apiGroups: ['apps'], kinds: ['Deployment'] }] },
      ...(parameters ? { parameters } : {}),
    },
  };
}

const gatekeeperObjects = [
  ...parseAllDocuments(readFileSync(TEMPLATES, 'utf8')).map((document) => document.toJS()),
  constraint('K8sRequiredLabels', 'owner-label', { labels: ['app'] }),
  constraint('K8sAllowedRepos', 'internal-images', { repos: ['registry.example.com/', 'nginx'] }),
  constraint('K8sPSPPrivilegedContainer', 'no-privileged'),
  constraint('K8sReplicaLimits', 'replica-range', { ranges: [{ min_replicas: 1, max_replicas: 50 }] }),
  constraint('K8sNamespaceOwner', 'namespace-owner', { label: 'owner' }),
  constraint('K8sContainerLimits', 'container-limits'),
  constraint('K8sPSPHostNamespace', 'no-host-namespaces'),
];

async function main() {
  regoEngine.configure(opaPath());
  const index = new ConstraintIndex();
  const ingestor = new Ingestor(index, new AdapterRegistry(), new ParseErrorCounter());
  ingestor.onChange(compileTemplateOnArrival(regoEngine));
  const namespace = namespaceObject(NAMESPACE);
  /** @type {Record<string, string>} */
  const namespaceLabels = { ...namespace.metadata.labels, owner: 'bench-team' };
  const compileStarted = performance.now();
  for (const object of [
    { ...namespace, metadata: { ...namespace.metadata, labels: namespaceLabels } },
    ...policyObjects(NAMESPACE, 13),
    ...gatekeeperObjects,
  ])
    ingestor.upsert(object);
  // Rego compiles in child processes: what the event loop still does meanwhile (reading the
  // bundles, instantiating the Wasm, one warm-up evaluation each) is its longest pause here.
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  await regoEngine.settled();
  const compileMilliseconds = performance.now() - compileStarted;
  delay.disable();

  const admitted = admittedDeployment(index, NAMESPACE);
  const { constraints } = admitted;
  const evaluateMicros = evaluateCpuMicros(admitted, ITERATIONS);
  const counts = verdictCounts(admitted);
  /** @type {GatekeeperOutput} */
  const output = {
    constraints: constraints.length,
    gatekeeperConstraints: constraints.filter((entry) =>
      entry.source.apiVersion.startsWith('constraints.gatekeeper.sh/'),
    ).length,
    verdicts: counts,
    iterations: ITERATIONS,
    evaluateCpuMicrosPerObject: Number(evaluateMicros.toFixed(1)),
    compileMilliseconds: Number(compileMilliseconds.toFixed(0)),
    eventLoopMaxDelayMillisecondsWhileCompiling: Number((delay.max / 1e6).toFixed(1)),
    budgetMicros: 500,
  };
  console.log(JSON.stringify(output));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
