// @ts-check
'use strict';

// Admission path: `POST /validate` over HTTPS through the real webhook and the real controller
// (a namespace with 20 constraints), each in its own process, against a bare Node HTTPS server
// answering the same AdmissionReview the webhook answered, at several concurrencies. A second
// reference, the "design floor", is a bare HTTPS server that makes one keep-alive HTTP query per
// review to a bare express handler serving the controller's list body: what the spec's design
// (one controller query per review, two processes) costs before any Forewarn code runs.

const https = require('node:https');
const { generateSelfSignedBundle } = require('../dist/services/webhook/certs/self-signed');
const { deploymentReview } = require('./lib/cluster-objects');
const { z } = require('zod');
const { compare } = require('./lib/measure');
const { startProcess } = require('./lib/processes');

const NAMESPACE = 'bench';

/** The part of the webhook's answer the benchmark checks before measuring. */
const answerSchema = z.object({
  response: z.object({ allowed: z.boolean(), warnings: z.array(z.string()).default([]) }),
});

/**
 * @param {number} port
 * @param {string} ca
 * @param {string} body
 * @returns {Promise<{status: number | undefined, body: unknown}>}
 */
function postOnce(port, ca, body) {
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        host: '127.0.0.1',
        port,
        path: '/validate',
        method: 'POST',
        ca,
        agent: false,
        headers: { 'content-type': 'application/json' },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode, body: JSON.parse(text) }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** @typedef {import('./lib/processes').RunningProcess<keyof import('./lib/processes').ReadyInfo>} RunningProcess */

/**
 * Starts the servers of every side, each pushed to `processes` as soon as it runs (the caller stops them).
 * @param {{certPem: string, keyPem: string}} certificate
 * @param {string} caPem
 * @param {string} review
 * @param {RunningProcess[]} processes
 */
async function startAdmissionServers(certificate, caPem, review, processes) {
  const controller = await startProcess('servers/controller.js', [
    JSON.stringify({ namespaces: { [NAMESPACE]: 20 } }),
  ]);
  processes.push(controller);
  const webhook = await startProcess('servers/webhook.js', [
    JSON.stringify({ controllerUrl: `http://127.0.0.1:${controller.info.port}`, certificate }),
  ]);
  processes.push(webhook);
  // The same webhook asking the label query instead of admission-check (the path before verdicts).
  const labelQueryWebhook = await startProcess('servers/webhook.js', [
    JSON.stringify({
      controllerUrl: `http://127.0.0.1:${controller.info.port}`,
      certificate,
      labelQuery: true,
    }),
  ]);
  processes.push(labelQueryWebhook);
  const sample = await postOnce(webhook.info.port, caPem, review);
  const answer = answerSchema.safeParse(sample.body);
  const warnings = answer.success ? answer.data.response.warnings.length : 0;
  if (sample.status !== 200 || !answer.success || !answer.data.response.allowed || warnings === 0)
    throw new Error(`the webhook did not answer with warnings: ${JSON.stringify(sample.body)}`);
  const bare = await startProcess('servers/bare-https.js', [
    JSON.stringify({ certificate, answer: sample.body }),
  ]);
  processes.push(bare);
  const listPath = `/api/v1/constraints?namespace=${NAMESPACE}&resource=apps/deployments&labels=app=web,tier=frontend`;
  const list = await (await fetch(`http://127.0.0.1:${controller.info.port}${listPath}`)).json();
  const backend = await startProcess('servers/bare-express.js', [
    JSON.stringify({ bodies: { '/api/v1/constraints': list } }),
  ]);
  processes.push(backend);
  const floor = await startProcess('servers/bare-https.js', [
    JSON.stringify({
      certificate,
      answer: sample.body,
      backendUrl: `http://127.0.0.1:${backend.info.port}${listPath}`,
    }),
  ]);
  processes.push(floor);
  return { controller, webhook, labelQueryWebhook, bare, backend, floor, warnings };
}

/** @param {{concurrencies: number[], durationSeconds: number}} options */
async function runAdmissionBenchmark({ concurrencies, durationSeconds }) {
  const bundle = await generateSelfSignedBundle({
    serviceName: 'forewarn-webhook',
    namespace: 'forewarn-system',
    extraSans: ['127.0.0.1'],
    now: new Date(),
  });
  const certificate = { certPem: bundle.certPem, keyPem: bundle.keyPem };
  const review = JSON.stringify(deploymentReview(NAMESPACE));
  /** @type {RunningProcess[]} */
  const processes = [];
  try {
    const { controller, webhook, labelQueryWebhook, bare, backend, floor, warnings } =
      await startAdmissionServers(certificate, bundle.caPem, review, processes);
    /** @type {Omit<import('./lib/measure').LoadRequest, 'url'>} */
    const request = {
      method: 'POST',
      body: review,
      headers: { 'content-type': 'application/json' },
    };
    const results = [];
    for (const connections of concurrencies) {
      const comparison = await compare({
        sides: {
          baseline: { ...request, url: `https://127.0.0.1:${bare.info.port}/validate`, processes: [bare] },
          subject: {
            ...request,
            url: `https://127.0.0.1:${webhook.info.port}/validate`,
            processes: [webhook, controller],
          },
          labelQuery: {
            ...request,
            url: `https://127.0.0.1:${labelQueryWebhook.info.port}/validate`,
            processes: [labelQueryWebhook, controller],
          },
          designFloor: {
            ...request,
            url: `https://127.0.0.1:${floor.info.port}/validate`,
            processes: [floor, backend],
          },
        },
        connections,
        durationSeconds,
      });
      results.push({
        namespaceConstraints: controller.info.constraints,
        warningsPerReview: warnings,
        ...comparison,
      });
    }
    for (const side of [webhook, labelQueryWebhook]) {
      const queries = await side.request({ type: 'query-counts' });
      if (queries.failed > 0)
        throw new Error(
          `${queries.failed} controller queries failed (last: ${queries.lastFailure}); figures discarded`,
        );
    }
    return results;
  } finally {
    await Promise.all(processes.map((running) => running.stop()));
  }
}

module.exports = { runAdmissionBenchmark };
