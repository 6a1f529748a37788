// @ts-check
'use strict';

// Verdict evaluation by itself (DESIGN.md 7b, issue 16): CPU per admitted object for the 20
// constraints of one namespace (quota, limit range, network, Cilium, Istio, Kyverno pattern rules,
// and a ValidatingAdmissionPolicy with CEL), evaluated in this process with no HTTP around it.
// `evaluate` is the evaluators alone; `admission check` adds selecting the constraints and
// rendering the answer, i.e. everything POST /api/v1/admission-check does after parsing;
// `webhook view` is the same check answered with only what becomes a warning (`view: warnings`),
// which is what the webhook asks for on every review.
// `defaulting` is the API server's defaults applied to the object, once before its verdicts.
// Prints one JSON line; the budget is 200 µs of CPU per object for `defaulting` + `evaluate`.

const { AdapterRegistry } = require('../dist/services/controller/adapters/registry');
const { ConstraintIndex } = require('../dist/services/controller/index/constraint-index');
const { Ingestor, ParseErrorCounter } = require('../dist/services/controller/index/ingest');
const { buildAdmissionCheck } = require('../dist/services/controller/verdicts/admission-check');
const { withServerDefaults } = require('../dist/services/controller/verdicts/defaulting');
const { namespaceObject, policyObjects } = require('./lib/cluster-objects');
const { cpuMicrosPerCall } = require('./lib/cpu-per-call');
const { admittedDeployment, evaluateCpuMicros, verdictCounts } = require('./lib/admitted-deployment');

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
 * @property {number} defaultingCpuMicrosPerObject
 * @property {number} admissionCheckCpuMicrosPerObject
 * @property {number} admissionWarningsCpuMicrosPerObject
 * @property {number} budgetMicros
 */

const index = new ConstraintIndex();
const ingestor = new Ingestor(index, new AdapterRegistry(), new ParseErrorCounter());
for (const object of [namespaceObject(NAMESPACE), ...policyObjects(NAMESPACE, 19), ...admissionPolicy()])
  ingestor.upsert(object);

const admitted = admittedDeployment(index, NAMESPACE);
const { object, constraints } = admitted;
const counts = verdictCounts(admitted);
const evaluateMicros = evaluateCpuMicros(admitted, ITERATIONS);
// The API server's defaults, applied once per admitted object before the verdicts (a copy).
const defaultingMicros = cpuMicrosPerCall((copy) => withServerDefaults(copy), object, ITERATIONS);
const checkMicros = cpuMicrosPerCall(
  (copy) => buildAdmissionCheck(index, { object: copy, operation: 'CREATE' }),
  object,
  ITERATIONS,
);

// What the webhook asks for: the same check, answered with only what becomes a warning.
const warningsMicros = cpuMicrosPerCall(
  (copy) => buildAdmissionCheck(index, { object: copy, operation: 'CREATE' }, { view: 'warnings' }),
  object,
  ITERATIONS,
);

/** @type {VerdictsOutput} */
const output = {
  constraints: constraints.length,
  verdicts: counts,
  iterations: ITERATIONS,
  evaluateCpuMicrosPerObject: Number(evaluateMicros.toFixed(1)),
  defaultingCpuMicrosPerObject: Number(defaultingMicros.toFixed(1)),
  admissionCheckCpuMicrosPerObject: Number(checkMicros.toFixed(1)),
  admissionWarningsCpuMicrosPerObject: Number(warningsMicros.toFixed(1)),
  budgetMicros: 200,
};
console.log(JSON.stringify(output));
