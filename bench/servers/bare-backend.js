// @ts-check
'use strict';

// The controller's side of the least a two-process webhook can cost (issue 33's floor): a plain
// Node HTTP server that reads a posted object, parses it as any implementation must, and answers
// an empty constraint list. With `bare-https.js --forwardReview` in front of it, a review crosses
// the same processes, sockets and parses as Forewarn's hop and nothing else.
// argv[2] (optional): JSON `{"spinMicroseconds": N, "workers": W}`: after the parse, N µs of CPU per
// request (a stand-in for a controller's evaluation, to see how the tail grows with it), on the main
// thread or, with W > 0, the parse and the work in a pool of W worker threads taken in turn.

const { createServer } = require('node:http');
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');
const { z } = require('zod');

const ANSWER = JSON.stringify({ constraints: [] });

/** Parses the body and burns `spinMicroseconds` of CPU: the stand-in evaluation. */
function work(/** @type {string} */ body, /** @type {number} */ spinMicroseconds) {
  JSON.parse(body);
  if (spinMicroseconds === 0) return;
  const end = process.hrtime.bigint() + BigInt(Math.round(spinMicroseconds * 1000));
  while (process.hrtime.bigint() < end);
}

if (!isMainThread) {
  parentPort?.on('message', (/** @type {{id: number, body: string}} */ { id, body }) => {
    work(body, workerData.spinMicroseconds);
    parentPort?.postMessage(id);
  });
} else {
  const { listeningPort, reportReady, serveCommands } = require('../lib/processes');
  const settings = z
    .object({ spinMicroseconds: z.number().min(0).default(0), workers: z.number().int().min(0).default(0) })
    .parse(JSON.parse(process.argv[2] || '{}'));
  const pool = Array.from(
    { length: settings.workers },
    () => new Worker(__filename, { workerData: { spinMicroseconds: settings.spinMicroseconds } }),
  );
  /** @type {Map<number, () => void>} */
  const pending = new Map();
  let sequence = 0;
  for (const worker of pool)
    worker.on('message', (/** @type {number} */ id) => {
      pending.get(id)?.();
      pending.delete(id);
    });

  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const send = () => {
        response.writeHead(200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(ANSWER),
        });
        response.end(ANSWER);
      };
      if (pool.length === 0) {
        work(body, settings.spinMicroseconds);
        send();
        return;
      }
      const id = sequence++;
      pending.set(id, send);
      pool[id % pool.length].postMessage({ id, body });
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(0, '127.0.0.1', () =>
    reportReady('servers/bare-backend.js', { port: listeningPort(server) }),
  );
  serveCommands({ 'cpu-usage': () => process.cpuUsage() });
  process.on('SIGTERM', () => process.exit(0));
}
