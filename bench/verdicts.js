// @ts-check
'use strict';

// Verdict evaluation by itself (DESIGN.md 7b, issue 16): CPU per admitted object for the 20
// constraints of one namespace (quota, limit range, network, Cilium, Istio, Kyverno pattern rules,
// and a ValidatingAdmissionPolicy with CEL), evaluated in this process with no HTTP around it.
// `evaluate` is the evaluators alone; `admission check` adds selecting the constraints and
// rendering the answer, i.e. everything POST /api/v1/admission-check does after parsing.
// Prints one JSON line; the budget is 200 µs of CPU per object for `evaluate`.

const { AdapterRegistry } = require('../dist/services/controller/adapters/registry');
const { ConstraintIndex } = require('../dist/services/controller/index/constraint-index');
const { Ingestor, ParseErrorCounter } = require('../dist/services/controller/index/ingest');
const { evaluateVerdicts } = require('../dist/services/controller/verdicts/evaluate');
const {
  buildAdmissionCheck,
  verdictIndexOf,
} = require('../dist/services/controller/verdicts/admission-check');
const { matchingConstraints } = require('../dist/services/controller/views/constraint-list');
const {
  namespaceObject,
  policyObjects,
  deploymentReview,
  WORKLOAD_LABELS,
} = require('./lib/cluster-objects');

const NAMESPACE = 'bench';
const ITERATIONS = Number(process.argv[2] || 5000);

function admissionPolicy() {
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'require-limits', uid: 'vap-1' },
      spec: {
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: ['apps'],
              apiVersions: ['v1'],
              operations: ['CREATE', 'UPDATE'],
              resources: ['deployments'],
            },
          ],
        },
        validations: [
          {
            expression:
              'object.spec.template.spec.containers.all(c, has(c.resources) && has(c.resources.limits))',
            message: 'every container must set resource limits',
          },
        ],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'require-limits-binding', uid: 'vapb-1' },
      spec: { policyName: 'require-limits', validationActions: ['Deny'] },
    },
  ];
}

/**
 * What this script prints, for bench/run.js.
 * @typedef {object} VerdictsOutput
 * @property {number} constraints
 * @property {Partial<Record<import('../dist/services/model/api').VerdictName, number>>} verdicts
 * @property {number} iterations
 * @property {number} evaluateCpuMicrosPerObject
 * @property {number} admissionCheckCpuMicrosPerObject
 * @property {number} budgetMicros
 */

/**
 * CPU per call, each call on its own copy of the object (copies made before measuring), as each admission brings a new one.
 * @template T
 * @param {(copy: T) => void} call
 * @param {T} object
 */
function cpuMicrosPerCall(call, object) {
  for (let warm = 0; warm < 500; warm++) call(structuredClone(object));
  const copies = Array.from({ length: ITERATIONS }, () => structuredClone(object));
  const started = process.cpuUsage();
  for (let iteration = 0; iteration < ITERATIONS; iteration++) call(copies[iteration]);
  const used = process.cpuUsage(started);
  return (used.user + used.system) / ITERATIONS;
}

const index = new ConstraintIndex();
const ingestor = new Ingestor(index, new AdapterRegistry(), new ParseErrorCounter());
for (const object of [namespaceObject(NAMESPACE), ...policyObjects(NAMESPACE, 19), ...admissionPolicy()])
  ingestor.upsert(object);

const object = deploymentReview(NAMESPACE).request.object;
const constraints = matchingConstraints(
  index,
  {
    namespace: NAMESPACE,
    resource: { group: 'apps', resource: 'deployments' },
    labels: WORKLOAD_LABELS,
    object,
  },
  [],
);
/** @type {Omit<import('../dist/services/controller/verdicts/types').VerdictContext, 'guard'>} */
const context = {
  admitted: {
    object,
    operation: 'CREATE',
    namespace: NAMESPACE,
    namespaceLabels: index.labelsOfNamespace(NAMESPACE),
  },
  index: verdictIndexOf(index),
};
const verdicts = evaluateVerdicts(constraints, context);
/** @type {VerdictsOutput['verdicts']} */
const counts = {};
for (const { verdict } of verdicts) counts[verdict.verdict] = (counts[verdict.verdict] || 0) + 1;

const evaluateMicros = cpuMicrosPerCall(
  (copy) => evaluateVerdicts(constraints, { ...context, admitted: { ...context.admitted, object: copy } }),
  object,
);
const checkMicros = cpuMicrosPerCall(
  (copy) => buildAdmissionCheck(index, { object: copy, operation: 'CREATE' }),
  object,
);

/** @type {VerdictsOutput} */
const output = {
  constraints: constraints.length,
  verdicts: counts,
  iterations: ITERATIONS,
  evaluateCpuMicrosPerObject: Number(evaluateMicros.toFixed(1)),
  admissionCheckCpuMicrosPerObject: Number(checkMicros.toFixed(1)),
  budgetMicros: 200,
};
console.log(JSON.stringify(output));
