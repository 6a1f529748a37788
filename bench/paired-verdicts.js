// @ts-check
'use strict';

// The two verdict benchmarks (bench/verdicts.js, bench/gatekeeper.js) of two built checkouts, run
// alternately in the same minutes (issue 32: "ordinary verdicts keep their cost, measured side by
// side"), so that the shared machine's load hits both alike. Each checkout runs its own scripts on
// its own dist/. Prints, per figure, each build's runs and the ratio of its median to the baseline's,
// with the load average.
//   node bench/paired-verdicts.js <baseline checkout> [other checkouts..., default this one] [--rounds=3]

const { execFileSync } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');

const OPA = process.env.FOREWARN_OPA_BIN || '/var/cache/forewarn-e2e/tools/opa-v1.22.3/opa';

/** The per-object CPU figures each script prints, by script. */
const FIGURES = {
  'bench/verdicts.js': [
    'evaluateCpuMicrosPerObject',
    'admissionCheckCpuMicrosPerObject',
    'admissionWarningsCpuMicrosPerObject',
  ],
  'bench/gatekeeper.js': ['evaluateCpuMicrosPerObject'],
};

/** @param {number[]} values */
function median(values) {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)];
}

/** @param {string} checkout @param {string} script @returns {Record<string, number>} */
function run(checkout, script) {
  const output = execFileSync(process.execPath, [path.join(checkout, script)], {
    encoding: 'utf8',
    env: { ...process.env, FOREWARN_OPA_BIN: OPA },
  });
  return JSON.parse(output.trim().split('\n').pop() ?? '{}');
}

function main() {
  const checkouts = process.argv.slice(2).filter((argument) => !argument.startsWith('--'));
  if (checkouts.length === 0) {
    console.error(
      'usage: node bench/paired-verdicts.js <baseline checkout> [other checkouts...] [--rounds=3]',
    );
    process.exit(2);
  }
  const builds = checkouts.map((checkout) => path.resolve(checkout));
  if (builds.length === 1) builds.push(path.join(__dirname, '..'));
  const roundsArgument = process.argv.find((argument) => argument.startsWith('--rounds='));
  const rounds = roundsArgument ? Number(roundsArgument.slice('--rounds='.length)) : 3;
  /** @type {Record<string, number[][]>} runs of each figure, by build */
  const samples = {};
  const loads = [];
  for (let round = 0; round < rounds; round++)
    for (const [script, figures] of Object.entries(FIGURES)) {
      // Rotate which build goes first, so none always runs on the warmer (or busier) moment.
      const order = builds.map((_, position) => (position + round) % builds.length);
      for (const build of order) {
        loads.push(os.loadavg()[0]);
        const result = run(builds[build], script);
        for (const figure of figures) {
          const key = `${script} ${figure}`;
          samples[key] ??= builds.map(() => []);
          samples[key][build].push(result[figure]);
        }
      }
    }
  const figures = Object.entries(samples).map(([figure, runs]) => ({
    figure,
    runs: Object.fromEntries(builds.map((build, position) => [build, runs[position]])),
    ratioToBaseline: Object.fromEntries(
      builds
        .slice(1)
        .map((build, position) => [build, Number((median(runs[position + 1]) / median(runs[0])).toFixed(2))]),
    ),
  }));
  console.log(
    JSON.stringify({
      baseline: builds[0],
      rounds,
      loadAverage: [Math.min(...loads), Math.max(...loads)].map((load) => Number(load.toFixed(1))),
      figures,
    }),
  );
}

main();
