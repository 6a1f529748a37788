// @ts-check
'use strict';

const { execFileSync } = require('node:child_process');
const { readFileSync } = require('node:fs');

// CPU time of any process on this machine, from /proc (user + system, all its threads): how the peer
// benchmark charges each webhook, whatever language it is written in.

/** Clock ticks per second of /proc/<pid>/stat's times (100 on Linux, read once). */
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/**
 * Seconds of CPU the process has used so far.
 * @param {number} pid
 */
function processCpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: the fields counted from the closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const userTicks = Number(fields[11]);
  const systemTicks = Number(fields[12]);
  return (userTicks + systemTicks) / CLOCK_TICKS;
}

/**
 * Sums the CPU seconds of several processes over `run`.
 * @template T
 * @param {number[]} pids
 * @param {() => Promise<T>} run
 * @returns {Promise<{result: T, cpuSeconds: number, wallSeconds: number}>}
 */
async function measureCpu(pids, run) {
  const total = () => pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);
  const before = total();
  const started = process.hrtime.bigint();
  const result = await run();
  const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { result, cpuSeconds: total() - before, wallSeconds };
}

module.exports = { processCpuSeconds, measureCpu };
