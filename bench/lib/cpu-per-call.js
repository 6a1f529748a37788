// @ts-check
'use strict';

// CPU per evaluation of one admitted object, as a long-running controller spends it: after a
// warm-up long enough for V8 to optimise the evaluators (a controller answers thousands of
// admissions; the first few hundred run on unoptimised code and cost about half as much again), and
// on a fresh copy of the object each call, as each admission brings its own. The copies are made
// outside the measured time, a batch at a time: a controller holds an admission's object only while
// it answers, so holding thousands of them (and what was derived from them) alive across the
// measurement would charge the evaluation with old-generation garbage collection no admission causes.

const WARM_UP_CALLS = Number(process.env.FOREWARN_BENCH_WARM_UP_CALLS || 10000);
const COPIES_PER_BATCH = 100;

/**
 * Microseconds of process CPU (user and system) per call.
 * @template T
 * @param {(copy: T) => void} call
 * @param {T} object
 * @param {number} iterations
 */
function cpuMicrosPerCall(call, object, iterations) {
  for (let warm = 0; warm < WARM_UP_CALLS; warm++) call(structuredClone(object));
  let used = 0;
  for (let done = 0; done < iterations; done += COPIES_PER_BATCH) {
    const copies = Array.from({ length: Math.min(COPIES_PER_BATCH, iterations - done) }, () =>
      structuredClone(object),
    );
    const started = process.cpuUsage();
    for (const copy of copies) call(copy);
    const batch = process.cpuUsage(started);
    used += batch.user + batch.system;
  }
  return used / iterations;
}

module.exports = { cpuMicrosPerCall, WARM_UP_CALLS };
