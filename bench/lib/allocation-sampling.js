// @ts-check
'use strict';

const { Session } = require('node:inspector');
const { writeFileSync } = require('node:fs');

// What a bench server allocates, every object counted whether or not a scavenge or a full collection
// freed it since (the `--heap-prof` flag keeps only what is still alive at the end, which for a
// server's per-request garbage is next to nothing). The profile is Chrome's `.heapprofile` format:
// open it in DevTools' Memory tab, or sum its nodes' `selfSize` by function.

function createAllocationSampling() {
  const session = new Session();
  session.connect();
  /** @param {string} method @param {object} [parameters] @returns {Promise<unknown>} */
  const post = (method, parameters = {}) =>
    new Promise((resolve, reject) =>
      session.post(method, parameters, (error, result) => (error ? reject(error) : resolve(result))),
    );
  return {
    /** @param {number} intervalBytes the mean bytes between two samples */
    async start(intervalBytes) {
      await post('HeapProfiler.enable');
      await post('HeapProfiler.startSampling', {
        samplingInterval: intervalBytes,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
    },
    /** @param {string} file where the `.heapprofile` goes */
    async take(file) {
      const { profile } = /** @type {{profile: object}} */ (await post('HeapProfiler.stopSampling'));
      writeFileSync(file, JSON.stringify(profile));
      return file;
    },
  };
}

module.exports = { createAllocationSampling };
