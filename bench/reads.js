// @ts-check
'use strict';

// Controller reads: `GET /resources/reports/{ns}` and `GET /api/v1/constraints?namespace=` on the
// real controller (a 20-constraint namespace in an index of 1,020 constraints) against a bare
// express handler answering the same body, captured from the controller at the start of the run.

const { compare } = require('./lib/measure');
const { startProcess } = require('./lib/processes');

const NAMESPACE = 'bench';
const ROUTES = [
  { name: 'GET /resources/reports/{ns}', path: `/resources/reports/${NAMESPACE}` },
  {
    name: 'GET /api/v1/constraints',
    path: `/api/v1/constraints?namespace=${NAMESPACE}&resource=apps/deployments&labels=app=web,tier=frontend`,
  },
];

/** @param {{connections: number, durationSeconds: number}} options */
async function runReadsBenchmark({ connections, durationSeconds }) {
  /** @type {Record<string, number>} */
  const namespaces = { [NAMESPACE]: 20 };
  for (let position = 0; position < 100; position++) namespaces[`team-${position}`] = 10;
  const controller = await startProcess('servers/controller.js', [JSON.stringify({ namespaces })]);
  /** @type {Record<string, unknown>} */
  const bodies = {};
  for (const route of ROUTES) {
    const response = await fetch(`http://127.0.0.1:${controller.info.port}${route.path}`);
    if (response.status !== 200) throw new Error(`${route.path} answered ${response.status}`);
    bodies[route.path.split('?')[0]] = await response.json();
  }
  const bare = await startProcess('servers/bare-express.js', [JSON.stringify({ bodies })]);
  try {
    const results = [];
    for (const route of ROUTES) {
      const comparison = await compare({
        sides: {
          baseline: { url: `http://127.0.0.1:${bare.info.port}${route.path}`, processes: [bare] },
          subject: { url: `http://127.0.0.1:${controller.info.port}${route.path}`, processes: [controller] },
        },
        connections,
        durationSeconds,
      });
      results.push({ route: route.name, indexedConstraints: controller.info.constraints, ...comparison });
    }
    return results;
  } finally {
    await Promise.all([controller.stop(), bare.stop()]);
  }
}

module.exports = { runReadsBenchmark };
