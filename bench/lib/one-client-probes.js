// @ts-check
'use strict';

// Probes of bench/one-client-threads.js (issue 33): what differs between a review the API server
// sends and one sent straight to the webhook. One review captured as the API server sends it (its
// bytes and headers) and replayed straight, each copy with a name and uids of its own; and the
// system calls per request of a process over a measured phase.

const path = require('node:path');
const { readFileSync } = require('node:fs');
const { configure } = require('./api-server-cluster');

/** @typedef {{body: string, rawHeaders: string[]}} CapturedReview */
/** @typedef {import('./api-server-cluster').ApiAccess} ApiAccess */

/**
 * One review exactly as the API server sends it: an HTTPS listener of this process's own is
 * registered as the webhook of namespace `shop` for one dry-run create, and answers it allowed.
 * @param {ApiAccess} api
 * @param {{certPem: string, keyPem: string}} certificate
 * @param {string} caPem
 * @returns {Promise<CapturedReview>}
 */
async function captureApiServerReview(api, certificate, caPem) {
  const { createServer } = require('node:https');
  /** @type {CapturedReview[]} */
  const seen = [];
  const listener = createServer(
    { cert: certificate.certPem, key: certificate.keyPem },
    (request, response) => {
      /** @type {Buffer[]} */
      const chunks = [];
      request.on('data', (chunk) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        seen.push({ body, rawHeaders: request.rawHeaders });
        const uid = JSON.parse(body).request.uid;
        response.setHeader('content-type', 'application/json');
        response.end(
          JSON.stringify({
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            response: { uid, allowed: true },
          }),
        );
      });
    },
  );
  await new Promise((resolve) => listener.listen(0, '127.0.0.1', () => resolve(undefined)));
  const port = /** @type {import('node:net').AddressInfo} */ (listener.address()).port;
  await configure(api, { webhookUrl: `https://127.0.0.1:${port}/validate`, caPem, namespace: 'shop' });
  listener.closeAllConnections();
  await new Promise((resolve) => listener.close(() => resolve(undefined)));
  const last = seen.at(-1);
  if (!last) throw new Error('the API server sent no review to the capturing listener');
  return last;
}

/**
 * The captured review, straight to a webhook on `port` with the API server's headers, each copy
 * with a name and uids of its own (so no memo or coalescing answers for the evaluation).
 * @param {number} port
 * @param {CapturedReview} captured
 * @param {() => number} nextSequence
 * @returns {import('./measure').LoadRequest}
 */
function replayedReviews(port, captured, nextSequence) {
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
  const review = JSON.parse(captured.body);
  const name = review.request.name;
  const uids = [review.request.uid, review.request.object.metadata.uid].filter(Boolean);
  let text = captured.body;
  for (const [index, value] of [name, ...uids].entries()) text = text.split(value).join(`@${index}@`);
  const parts = text.split(/@(\d)@/);
  /** @type {Record<string, string>} */
  const headers = {};
  for (let index = 0; index + 1 < captured.rawHeaders.length; index += 2) {
    const header = captured.rawHeaders[index].toLowerCase();
    if (header !== 'host' && header !== 'content-length') headers[header] = captured.rawHeaders[index + 1];
  }
  return {
    url: `https://127.0.0.1:${port}/validate`,
    method: 'POST',
    headers,
    nextBody: () => {
      const sequence = nextSequence();
      let body = parts[0];
      for (let position = 1; position < parts.length; position += 2) {
        const index = Number(parts[position]);
        body +=
          index === 0
            ? `${name}-r${sequence}`
            : `${index}${sequence.toString(16).padStart(7, '0')}-6393-11e8-b7cc-42010a800002`;
        body += parts[position + 1];
      }
      return body;
    },
  };
}

/**
 * STRACE=1: `strace -c -f` of one process over a measured phase, its system calls per request
 * (how many reads, writes and epoll waits one review costs; strace slows the process, so the CPU
 * figures of such a run are not comparable).
 * @param {string} label
 * @param {string} name
 * @param {number} pid
 */
function traceSyscalls(label, name, pid) {
  const { spawn } = require('node:child_process');
  const output = path.join(require('node:os').tmpdir(), `forewarn-strace-${label}-${name}.txt`);
  const tracer = spawn('strace', ['-c', '-f', '-o', output, '-p', String(pid)], { stdio: 'ignore' });
  return {
    /** @param {number} requests */
    async report(requests) {
      const exited = new Promise((resolve) => tracer.on('exit', resolve));
      tracer.kill('SIGINT');
      await exited;
      const rows = readFileSync(output, 'utf8')
        .split('\n')
        .map((line) => line.trim().split(/\s+/))
        .filter((fields) => fields.length >= 5 && /^\d/.test(fields[0]) && fields.at(-1) !== 'total');
      const perRequest = rows
        .map((fields) => {
          const hasErrors = fields.length >= 6;
          return `${fields.at(-1)} ${(Number(fields[3]) / requests).toFixed(2)}${hasErrors ? ` (errors ${(Number(fields[4]) / requests).toFixed(2)})` : ''}`;
        })
        .slice(0, 12);
      console.log(`-- ${name} system calls per request: ${perRequest.join(', ')}`);
    },
  };
}

module.exports = { captureApiServerReview, replayedReviews, traceSyscalls };
