// @ts-check
'use strict';

// One review posted straight to a webhook's /validate over a pooled HTTPS agent, for the benchmarks
// that drive the webhook without the API server (paired-builds.js, controller-tail.js).

const https = require('node:https');

/**
 * Resolves once the answer was read whole with status 200.
 * @param {import('node:https').Agent} agent
 * @param {number} port
 * @param {string} body
 * @returns {Promise<void>}
 */
function postReview(agent, port, body) {
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        host: '127.0.0.1',
        port,
        path: '/validate',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json' },
      },
      (response) => {
        response.resume();
        response.on('end', () =>
          response.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${response.statusCode}`)),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * A closed loop of `connections` clients posting distinct reviews until `durationMs` has passed;
 * the latency of each review in ms.
 * @param {{agent: import('node:https').Agent, port: number, connections: number, durationMs: number, nextReview: () => string}} load
 * @returns {Promise<number[]>}
 */
async function postReviewsFor({ agent, port, connections, durationMs, nextReview }) {
  const end = Date.now() + durationMs;
  /** @type {number[]} */
  const latencies = [];
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < end) {
        const started = performance.now();
        await postReview(agent, port, nextReview());
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies;
}

module.exports = { postReview, postReviewsFor };
