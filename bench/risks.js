// @ts-check
'use strict';

// Workloads at risk (issue 35): the background evaluation of every running workload must never
// delay the API's answers. The real controller process holds namespaces of policies and
// Deployments; admission checks (`POST /api/v1/admission-check`, distinct objects so that the memo
// cannot answer) are measured at rest and during back-to-back full re-evaluations of every
// workload, in palindromic order (rest, busy, busy, rest, twice) so the shared machine's drift hits both
// alike. The target: p99 during re-evaluation within 10% of at rest.

const { startProcess } = require('./lib/processes');
const { admissionDuringReevaluation, admissionSide, loadAverage } = require('./lib/risk-figures');

/**
 * @param {{namespaces?: number, constraints?: number, deployments?: number, connections?: number, durationSeconds?: number}} options
 */
async function runRisksBenchmark({
  namespaces = 50,
  constraints = 20,
  deployments = 40,
  connections = 4,
  durationSeconds = 4,
}) {
  const controller = await startProcess(
    'servers/risks-controller.js',
    [JSON.stringify({ namespaces, constraints, deployments })],
    { timeoutMs: 10 * 60_000 },
  );
  try {
    const loadBefore = loadAverage();
    const figures = await admissionDuringReevaluation(
      controller,
      admissionSide(controller.info.port, namespaces),
      { connections, durationSeconds },
    );
    return {
      size: {
        namespaces,
        constraintsPerNamespace: constraints,
        deploymentsPerNamespace: deployments,
        workloads: figures.workloads,
      },
      connections,
      restP99Ms: figures.restP99Ms,
      busyP99Ms: figures.busyP99Ms,
      p99Ratio: figures.p99Ratio,
      fullEvaluations: figures.fullEvaluations,
      // CPU of the controller while re-evaluating (admission checks included) per workload evaluated.
      cpuMicrosecondsPerWorkload:
        (figures.cpuSeconds * 1e6) / Math.max(1, figures.fullEvaluations * figures.workloads),
      loadAverage: { before: loadBefore, after: loadAverage() },
    };
  } finally {
    await controller.stop();
  }
}

/** @param {Awaited<ReturnType<typeof runRisksBenchmark>>} figures */
function risksVerdicts(figures) {
  return [
    {
      benchmark: 'admission p99 during a full re-evaluation of the workloads at risk, vs at rest',
      target: '<= 1.10',
      measured: `${figures.p99Ratio.toFixed(2)} (${figures.busyP99Ms.toFixed(2)} / ${figures.restP99Ms.toFixed(2)} ms)`,
      pass: figures.p99Ratio <= 1.1,
    },
  ];
}

module.exports = { runRisksBenchmark, risksVerdicts };

if (require.main === module) {
  // node bench/risks.js [namespaces constraints deployments connections seconds]
  const [namespaces, constraints, deployments, connections, durationSeconds] = process.argv
    .slice(2)
    .map(Number);
  runRisksBenchmark({ namespaces, constraints, deployments, connections, durationSeconds }).then(
    (result) => console.log(JSON.stringify({ ...result, verdicts: risksVerdicts(result) }, null, 2)),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
