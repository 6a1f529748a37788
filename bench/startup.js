// @ts-check
'use strict';

// Start-up CPU of the `forewarn` command line (issue 34): `--version`, `--help`, `completion bash`
// and `report` against a running controller (the bench controller process, a 20-constraint
// namespace), each against a bare `node -e 1` measured in the same run. A child's CPU is read from
// this process's own /proc/self/stat (cutime + cstime: the user and system CPU of the children it
// waited for), so everything the child spends counts, Node's own bootstrap included. The kernel
// counts in clock ticks (10 ms): each figure is the median of several runs, taken in turns so a
// burst of load on the machine hits every command alike. Prints one JSON line (StartupOutput).

const { execFileSync, spawnSync } = require('node:child_process');
const { readFileSync } = require('node:fs');
const path = require('node:path');
const { startProcess } = require('./lib/processes');

// FOREWARN_BENCH_CLI_BINARY: another build's main.js, to compare before and after a change.
const BINARY = process.env.FOREWARN_BENCH_CLI_BINARY || path.join(__dirname, '../dist/services/cli/main.js');
const RUNS = Number(process.env.FOREWARN_BENCH_STARTUP_RUNS || 11);

/**
 * @typedef {{command: string, medianCpuMs: number, minCpuMs: number, ratioToBare: number, budgetMs: number | null}} StartupFigure
 * @typedef {{runs: number, tickMs: number, bareNodeCpuMs: number, commands: StartupFigure[]}} StartupOutput
 */

const tickMs = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** CPU (ms) of the children this process has waited for so far. */
function childrenCpuMs() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // Fields after the command name in parentheses (which may hold spaces); cutime and cstime are
  // fields 16 and 17 of proc(5), the 14th and 15th after the name.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) * tickMs;
}

/**
 * CPU of one run of `node args`, which must exit with `expectedCode`.
 * @param {string[]} args
 * @param {number} expectedCode
 */
function cpuOfRun(args, expectedCode) {
  const before = childrenCpuMs();
  const result = spawnSync(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH },
  });
  const cpu = childrenCpuMs() - before;
  if (result.status !== expectedCode)
    throw new Error(
      `node ${args.join(' ')} exited ${result.status}: ${result.stderr.toString().slice(0, 500)}`,
    );
  return cpu;
}

/** @param {number[]} values */
function median(values) {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main() {
  const controller = await startProcess('servers/controller.js', [
    JSON.stringify({ namespaces: { bench: 20 } }),
  ]);
  try {
    const url = `http://127.0.0.1:${controller.info.port}`;
    /** @type {Array<{command: string, args: string[], code: number, budgetMs: number | null}>} */
    const commands = [
      { command: 'node -e 1 (bare)', args: ['-e', '1'], code: 0, budgetMs: null },
      { command: 'forewarn --version', args: [BINARY, '--version'], code: 0, budgetMs: 150 },
      { command: 'forewarn --help', args: [BINARY, '--help'], code: 0, budgetMs: 150 },
      ...(process.env.FOREWARN_BENCH_CLI_BINARY
        ? []
        : [
            {
              command: 'forewarn completion bash',
              args: [BINARY, 'completion', 'bash'],
              code: 0,
              budgetMs: null,
            },
          ]),
      {
        command: 'forewarn report (20 constraints)',
        args: [BINARY, 'report', '-n', 'bench', '--url', url],
        code: 0,
        budgetMs: 300,
      },
    ];
    /** @type {number[][]} */
    const samples = commands.map(() => []);
    // One warm-up round (file cache), not counted.
    for (const command of commands) cpuOfRun(command.args, command.code);
    for (let run = 0; run < RUNS; run++)
      commands.forEach((command, index) => samples[index].push(cpuOfRun(command.args, command.code)));
    const bare = median(samples[0]);
    /** @type {StartupOutput} */
    const output = {
      runs: RUNS,
      tickMs,
      bareNodeCpuMs: bare,
      commands: commands.map((command, index) => ({
        command: command.command,
        medianCpuMs: median(samples[index]),
        minCpuMs: Math.min(...samples[index]),
        ratioToBare: median(samples[index]) / bare,
        budgetMs: command.budgetMs,
      })),
    };
    process.stdout.write(`${JSON.stringify(output)}\n`);
  } finally {
    await controller.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
