/* eslint-disable @typescript-eslint/no-require-imports -- see below */

// The modules of `forewarn` that only some commands need, loaded when an action first asks for them:
// `--help` and `--version` then load commander and little else, `report` no engine, and only an
// offline `check` the verdict engines (docs/benchmarks.md, start-up). A `require` per module keeps
// its types (`typeof import`) without the ES module loader, which `await import()` would bring into
// this CommonJS package.

export const lazy = {
  checkCommand: () => require('./check-command') as typeof import('./check-command'),
  ciFormats: () => require('./render-ci-format') as typeof import('./render-ci-format'),
  completion: () => require('./completion') as typeof import('./completion'),
  controllerApi: () => require('./controller-api') as typeof import('./controller-api'),
  kubeCredentials: () => require('./kube-credentials') as typeof import('./kube-credentials'),
  offlineIndex: () => require('./offline-index') as typeof import('./offline-index'),
  manifestParsing: () =>
    require('../controller/sources/manifest-parsing') as typeof import('../controller/sources/manifest-parsing'),
  impact: () => require('../controller/risks/impact') as typeof import('../controller/risks/impact'),
  riskView: () => require('../controller/risks/risk-view') as typeof import('../controller/risks/risk-view'),
  riskSchemas: () => require('./risks-schemas') as typeof import('./risks-schemas'),
  renderRisks: () => require('./render-risks') as typeof import('./render-risks'),
  opaqueReference: () => require('../model/opaque-reference') as typeof import('../model/opaque-reference'),
  output: () => require('./output') as typeof import('./output'),
  renderCheck: () => require('./render-check') as typeof import('./render-check'),
  renderViews: () => require('./render-views') as typeof import('./render-views'),
  wireSchemas: () => require('./wire-schemas') as typeof import('./wire-schemas'),
};
