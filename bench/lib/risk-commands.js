// @ts-check
'use strict';

// What the bench controllers (servers/cluster-controller.js, servers/risks-controller.js) do with
// their workloads-at-risk tracker when the benchmark asks: full re-evaluations back to back, and
// waiting for a policy change to be reflected.

const { performance } = require('node:perf_hooks');

/** @typedef {import('../../dist/services/controller/risks/risk-tracker').RiskTracker} RiskTracker */

/**
 * Full re-evaluations back to back for `seconds`, at least one (the last one is finished): how many,
 * and their CPU.
 * @param {RiskTracker} risks
 * @param {number} seconds
 */
async function reevaluateFor(risks, seconds) {
  const deadline = performance.now() + seconds * 1000;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let rounds = 0;
  do {
    risks.reevaluateAll();
    await risks.idle();
    rounds++;
  } while (performance.now() < deadline);
  const cpu = process.cpuUsage(cpuBefore);
  return {
    rounds,
    workloads: risks.status().workloads,
    seconds: (performance.now() - started) / 1000,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
}

/**
 * @param {RiskTracker} risks
 * @returns {number} the workloads that would be rejected, over every namespace
 */
function rejectedWorkloads(risks) {
  return risks.countsByNamespace().reduce((sum, counts) => sum + counts.rejected, 0);
}

/**
 * Resolves when the tracker counts `rejected` rejected workloads with nothing pending (polled every
 * 5 ms: the poll is a sum over the namespaces at risk), with the wall-clock time it saw that, as
 * milliseconds since the epoch so that another process's timestamp can be compared with it.
 * @param {RiskTracker} risks
 * @param {number} rejected
 * @param {number} timeoutMs
 */
function awaitRejected(risks, rejected, timeoutMs) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const poll = () => {
      const now = rejectedWorkloads(risks);
      if (now === rejected && risks.status().pending === 0)
        return resolve({
          atEpochMs: performance.timeOrigin + performance.now(),
          rejected: now,
          cpu: process.cpuUsage(),
        });
      if (performance.now() - started > timeoutMs)
        return reject(new Error(`${now} workloads rejected after ${timeoutMs} ms, expected ${rejected}`));
      setTimeout(poll, 5);
    };
    poll();
  });
}

module.exports = { reevaluateFor, awaitRejected, rejectedWorkloads };
