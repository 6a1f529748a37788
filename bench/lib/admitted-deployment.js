// @ts-check
'use strict';

// The Deployment both verdict benchmarks admit (bench/verdicts.js, bench/gatekeeper.js): the
// constraints of its namespace that apply to it, as the admission check selects them, and the
// context its verdicts are evaluated in, with no HTTP around them.

const { evaluateVerdicts } = require('../../dist/services/controller/verdicts/evaluate');
const { verdictIndexOf } = require('../../dist/services/controller/verdicts/admission-check');
const { matchingConstraints } = require('../../dist/services/controller/views/constraint-list');
const { deploymentReview, WORKLOAD_LABELS } = require('./cluster-objects');
const { cpuMicrosPerCall } = require('./cpu-per-call');

/**
 * @param {import('../../dist/services/controller/index/constraint-index').ConstraintIndex} index
 * @param {string} namespace
 */
function admittedDeployment(index, namespace) {
  const object = deploymentReview(namespace).request.object;
  const constraints = matchingConstraints(
    index,
    { namespace, resource: { group: 'apps', resource: 'deployments' }, labels: WORKLOAD_LABELS, object },
    [],
  );
  /** @type {Omit<import('../../dist/services/controller/verdicts/types').VerdictContext, 'guard'>} */
  const context = {
    admitted: {
      object,
      operation: 'CREATE',
      namespace,
      namespaceLabels: index.labelsOfNamespace(namespace),
    },
    index: verdictIndexOf(index),
  };
  return { object, constraints, context };
}

/**
 * How many of the Deployment's verdicts are of each kind.
 * @param {ReturnType<typeof admittedDeployment>} admitted
 */
function verdictCounts({ constraints, context }) {
  /** @type {Partial<Record<import('../../dist/services/model/api').VerdictName, number>>} */
  const counts = {};
  for (const { verdict } of evaluateVerdicts(constraints, context))
    counts[verdict.verdict] = (counts[verdict.verdict] || 0) + 1;
  return counts;
}

/**
 * CPU per evaluation of the Deployment's verdicts, each on its own copy of the object.
 * @param {ReturnType<typeof admittedDeployment>} admitted
 * @param {number} iterations
 */
function evaluateCpuMicros({ object, constraints, context }, iterations) {
  return cpuMicrosPerCall(
    (copy) => evaluateVerdicts(constraints, { ...context, admitted: { ...context.admitted, object: copy } }),
    object,
    iterations,
  );
}

module.exports = { admittedDeployment, verdictCounts, evaluateCpuMicros };
