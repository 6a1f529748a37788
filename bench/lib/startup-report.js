// @ts-check
'use strict';

const path = require('node:path');
const { format, printTable } = require('./table');

// The table and verdicts of `bench/startup.js` (start-up CPU of the command line, issue 34).

/**
 * Prints the start-up table and returns a verdict per command with a budget.
 * @param {import('../startup').StartupOutput} figures
 * @returns {Array<{benchmark: string, target: string, measured: string, pass: boolean | null}>}
 */
function reportStartup(figures) {
  printTable(
    `Start-up: CPU of one run of the command line (median of ${figures.runs}, ${figures.tickMs} ms ticks), against bare node -e 1`,
    ['command', 'CPU ms (median)', 'CPU ms (min)', 'ratio to bare node', 'budget ms'],
    figures.commands.map((figure) => [
      figure.command,
      format(figure.medianCpuMs, 0),
      format(figure.minCpuMs, 0),
      format(figure.ratioToBare, 1),
      figure.budgetMs === null ? '-' : String(figure.budgetMs),
    ]),
  );
  return figures.commands.flatMap((figure) =>
    figure.budgetMs === null
      ? []
      : [
          {
            benchmark: `start-up CPU of ${figure.command}`,
            target: `< ${figure.budgetMs} ms`,
            measured: `${format(figure.medianCpuMs, 0)} ms (${format(figure.ratioToBare, 1)}x bare node)`,
            pass: figure.medianCpuMs < figure.budgetMs,
          },
        ],
  );
}

/**
 * Runs bench/startup.js in a process of its own, prints its table and adds its verdicts.
 * @param {(nodeArguments: string[]) => Promise<unknown>} runJsonScript
 * @param {Array<{benchmark: string, target: string, measured: string, pass: boolean | null}>} verdicts
 */
async function runStartupBenchmark(runJsonScript, verdicts) {
  const figures = /** @type {import('../startup').StartupOutput} */ (
    await runJsonScript([path.join(__dirname, '../startup.js')])
  );
  verdicts.push(...reportStartup(figures));
  return figures;
}

module.exports = { reportStartup, runStartupBenchmark };
