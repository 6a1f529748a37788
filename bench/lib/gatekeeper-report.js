// @ts-check
'use strict';

// The Gatekeeper benchmark's table and its line in the verdicts (bench/gatekeeper.js measures).

const { format, printTable } = require('./table');

/**
 * Prints the figures and returns the verdict line: CPU per object against the 500 µs budget.
 * @param {import('../gatekeeper').GatekeeperOutput} figures
 */
function reportGatekeeper(figures) {
  printTable(
    'Gatekeeper verdicts: CPU per admitted object, 20-constraint namespace (5 Rego, 2 CEL Gatekeeper constraints)',
    ['constraints', 'verdicts', 'evaluate µs', 'compile ms', 'event loop max delay ms'],
    [
      [
        figures.constraints,
        Object.entries(figures.verdicts)
          .map(([verdict, count]) => `${verdict} ${count}`)
          .join(', '),
        format(figures.evaluateCpuMicrosPerObject, 1),
        format(figures.compileMilliseconds, 0),
        format(figures.eventLoopMaxDelayMillisecondsWhileCompiling, 1),
      ],
    ],
  );
  return {
    benchmark:
      'Gatekeeper verdict evaluation CPU per object, 20 constraints (7 Gatekeeper: Rego on OPA, CEL)',
    target: `< ${figures.budgetMicros} µs`,
    measured: format(figures.evaluateCpuMicrosPerObject, 1),
    pass: figures.evaluateCpuMicrosPerObject < figures.budgetMicros,
  };
}

module.exports = { reportGatekeeper };
