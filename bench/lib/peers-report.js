// @ts-check
'use strict';

// The peer benchmark's tables and its lines in the verdicts (bench/peers.js measures; issue 33's targets
// are against Gatekeeper; Kyverno, when its admission controller is cached, is reported beside it).

const { runPeersBenchmark } = require('../peers');
const { format, printTable } = require('./table');

/** @typedef {{benchmark: string, target: string, measured: string, pass: boolean | null}} Verdict */

/**
 * Runs the peer benchmark, prints its tables and pushes the targets as verdicts.
 * @param {Verdict[]} verdicts
 * @param {number} durationSeconds
 * @param {number} rounds
 */
async function reportPeers(verdicts, durationSeconds, rounds) {
  const figures = await runPeersBenchmark({ durationSeconds, rounds });
  if ('skipped' in figures) {
    console.log(`\nPeer webhooks: skipped, ${figures.skipped}`);
    return figures;
  }
  for (const note of figures.notes) console.log(`Peer webhooks: ${note}`);
  const names = Object.keys(figures.idle);
  for (const row of figures.rows) {
    const bare = row.figures.bare;
    printTable(
      `Peer webhooks on kube-apiserver ${figures.kubernetesVersion}, ${row.connections} client(s): Deployment creates with dryRun=All (median of ${2 * figures.rounds} runs per case)`,
      [
        'case',
        'p50/p99 ms',
        'over bare p50/p99 ms',
        'creates/s',
        'CPU ms per admission (range)',
        'CPU / bare',
      ],
      names.map((name) => {
        const side = row.figures[/** @type {keyof typeof row.figures} */ (name)];
        if (!side) return [name, '-', '-', '-', '-', '-'];
        return [
          name,
          `${format(side.p50Ms)}/${format(side.p99Ms)}`,
          bare ? `+${format(side.p50Ms - bare.p50Ms)}/+${format(side.p99Ms - bare.p99Ms)}` : '-',
          format(side.requestsPerSecond, 0),
          `${format(side.cpuMsPerAdmission, 2)} (${format(side.cpuMsRange[0], 2)}-${format(side.cpuMsRange[1], 2)})`,
          bare && bare.cpuMsPerAdmission > 0
            ? `${format(side.cpuMsPerAdmission / bare.cpuMsPerAdmission, 1)}x`
            : '-',
        ];
      }),
    );
  }
  printTable(
    `Peer webhooks at rest: CPU over ${figures.idleSeconds} s from ${figures.settleSeconds} s after the load (Forewarn: webhook + controller; ${figures.warningsPerCreate} Forewarn warnings per create)`,
    ['case', 'CPU ms/s', 'largest 1 s burst, ms'],
    names.map((name) => {
      const idle = figures.idle[/** @type {keyof typeof figures.idle} */ (name)];
      return [name, format(idle?.msPerSecond ?? 0, 2), format(idle?.maxBurstMs ?? 0, 0)];
    }),
  );
  for (const row of figures.rows) {
    const { forewarn, bare } = row.figures;
    const gatekeepers = [row.figures['gatekeeper-cel'], row.figures['gatekeeper-rego']].filter(
      (side) => side !== undefined,
    );
    if (!forewarn || !bare || gatekeepers.length === 0) continue;
    const cheapestCpu = Math.min(...gatekeepers.map((side) => side.cpuMsPerAdmission));
    const fastestP50 = Math.min(...gatekeepers.map((side) => side.p50Ms - bare.p50Ms));
    const fastestP99 = Math.min(...gatekeepers.map((side) => side.p99Ms - bare.p99Ms));
    const hop = row.connections === 1 ? 1 : 0;
    verdicts.push(
      {
        benchmark: `peers c=${row.connections}: CPU per admission, Forewarn (webhook + controller) vs Gatekeeper`,
        target: `<= Gatekeeper's ${format(cheapestCpu, 2)} ms`,
        measured: `${format(forewarn.cpuMsPerAdmission, 2)} ms`,
        pass: forewarn.cpuMsPerAdmission <= cheapestCpu,
      },
      {
        benchmark: `peers c=${row.connections}: added latency over the bare webhook, Forewarn vs Gatekeeper`,
        target: `p50 <= +${format(fastestP50 + hop)} ms, p99 <= +${format(fastestP99)} ms`,
        measured: `+${format(forewarn.p50Ms - bare.p50Ms)} / +${format(forewarn.p99Ms - bare.p99Ms)} ms`,
        pass: forewarn.p50Ms - bare.p50Ms <= fastestP50 + hop && forewarn.p99Ms - bare.p99Ms <= fastestP99,
      },
    );
  }
  const idle = figures.idle.forewarn;
  if (idle !== undefined)
    verdicts.push({
      benchmark: 'peers: Forewarn webhook + controller CPU at rest',
      target: '<= 3 ms per second',
      measured: `${format(idle.msPerSecond, 2)} ms/s (largest 1 s burst ${format(idle.maxBurstMs, 0)} ms)`,
      pass: idle.msPerSecond <= 3,
    });
  return figures;
}

module.exports = { reportPeers };
