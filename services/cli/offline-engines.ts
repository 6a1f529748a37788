/* eslint-disable @typescript-eslint/no-require-imports -- see below */

// What `check --manifests DIR` needs and `check` against a controller does not: the index, the
// adapters and the verdict engines, loaded on the first offline check (start-up time,
// docs/benchmarks.md). A `require` keeps the types without the ES module loader (lazy-modules.ts).

export function offlineEngines(): typeof import('./offline-index') &
  Pick<typeof import('../controller/check/index-lookup'), 'indexLookup'> {
  const { indexLookup } =
    require('../controller/check/index-lookup') as typeof import('../controller/check/index-lookup');
  const offlineIndex = require('./offline-index') as typeof import('./offline-index');
  return { ...offlineIndex, indexLookup };
}
