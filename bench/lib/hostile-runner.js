// @ts-check
'use strict';

// Runs bench/hostile.js once per matcher, each in its own process with a time limit: a matcher whose
// work is not linear runs into the limit and is reported as unfinished instead of stalling the run.

const { execFile } = require('node:child_process');
const path = require('node:path');
const { format, printTable } = require('./table');

/** Each hostile matcher in its own process: one that is not linear runs into the time limit. */
const HOSTILE_MATCHERS = ['quantity', 'wildcard', 'cel find', 'cel replace', 'cel exists_one'];
const HOSTILE_TIME_LIMIT_MS = 60_000;
/** Linear work grows by 2 per doubling (ratio 1); this leaves room for noise, not for n log n blow-ups. */
const LINEAR_GROWTH_LIMIT = 1.5;

/** @param {string} matcher */
const runHostile = (matcher) =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(__dirname, '..', 'hostile.js'), matcher],
      { maxBuffer: 16 * 1024 * 1024, timeout: HOSTILE_TIME_LIMIT_MS, killSignal: 'SIGKILL' },
      (error, stdout) =>
        resolve(
          error
            ? {
                matcher,
                error: error.killed ? `not finished in ${HOSTILE_TIME_LIMIT_MS / 1000} s` : error.message,
              }
            : /** @type {import('../hostile').HostileOutput} */ (JSON.parse(stdout)),
        ),
    );
  });

/**
 * Issue 32: per engine, the worst event-loop hold and heap growth (`node bench/hostile.js engines`).
 * @returns {Promise<{engines: Record<string, {worstHoldMilliseconds: number, worstWallMilliseconds: number, worstHeapGrowthMegabytes: number, verdicts: string[]}>} | {error: string}>}
 */
const runHostileEngines = () =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(__dirname, '..', 'hostile.js'), 'engines'],
      { maxBuffer: 16 * 1024 * 1024, timeout: 5 * HOSTILE_TIME_LIMIT_MS, killSignal: 'SIGKILL' },
      (error, stdout) =>
        resolve(
          error
            ? {
                error: error.killed
                  ? `not finished in ${(5 * HOSTILE_TIME_LIMIT_MS) / 1000} s`
                  : error.message,
              }
            : JSON.parse(stdout),
        ),
    );
  });

/**
 * Runs the engines benchmark, prints its table and adds one verdict per engine.
 * @param {Array<{benchmark: string, target: string, measured: string, pass: boolean | null}>} verdicts
 */
async function reportHostileEngines(verdicts) {
  const engines = await runHostileEngines();
  if ('error' in engines) {
    verdicts.push({ benchmark: 'hostile engines', target: 'finishes', measured: engines.error, pass: false });
    return;
  }
  printTable(
    'Hostile policies and objects per engine (issue 32): worst event-loop hold and heap growth of one check',
    ['engine', 'worst hold ms', 'worst wall ms', 'worst heap growth MiB', 'verdicts'],
    Object.entries(engines.engines).map(([engine, figures]) => [
      engine,
      format(figures.worstHoldMilliseconds, 1),
      format(figures.worstWallMilliseconds, 1),
      format(figures.worstHeapGrowthMegabytes, 1),
      figures.verdicts.join(','),
    ]),
  );
  for (const [engine, figures] of Object.entries(engines.engines))
    verdicts.push({
      benchmark: `hostile ${engine}: event-loop hold / heap growth`,
      target: '<= 100 ms / <= 64 MiB',
      measured: `${format(figures.worstHoldMilliseconds, 1)} ms / ${format(figures.worstHeapGrowthMegabytes, 1)} MiB`,
      pass: figures.worstHoldMilliseconds <= 100 && figures.worstHeapGrowthMegabytes <= 64,
    });
}

/**
 * The growth verdicts of the matchers (issue 27), then the engines' holds and heap growth (issue 32).
 * @param {Array<{benchmark: string, target: string, measured: string, pass: boolean | null}>} verdicts
 * @param {Array<{matcher: string, error: string} | {matcher: string, growthPerDoubling: number[]}>} results
 */
async function reportHostile(verdicts, results) {
  for (const result of results) {
    const worst = 'error' in result ? Number.POSITIVE_INFINITY : Math.max(...result.growthPerDoubling);
    verdicts.push({
      benchmark: `hostile ${result.matcher}: time growth per size doubling`,
      target: `< ${LINEAR_GROWTH_LIMIT} (linear)`,
      measured: 'error' in result ? result.error : format(worst),
      pass: worst < LINEAR_GROWTH_LIMIT,
    });
  }
  await reportHostileEngines(verdicts);
}

module.exports = {
  reportHostile,
  HOSTILE_MATCHERS,
  LINEAR_GROWTH_LIMIT,
  runHostile,
  runHostileEngines,
  reportHostileEngines,
};
