// @ts-check
'use strict';

// Baselines for the admission path: a bare Node HTTPS server (same kind of certificate, same
// keep-alive settings as the webhook) that reads the request body and answers a fixed
// AdmissionReview, the one the real webhook answered for the benchmark's review. With
// `backendUrl` it first fetches that URL over a pooled keep-alive connection, as the webhook asks
// the controller: the least any implementation of the spec's design (one controller query per
// review) can cost. argv[2]: JSON `{"certificate": {"certPem", "keyPem"}, "answer": <review>,
// "backendUrl"?: "http://...", "forwardReview"?: true}`; with `forwardReview` the query is a POST of
// the review's object (the bytes the spec's hop must carry) instead of a GET.

const http = require('node:http');
const https = require('node:https');
const { z } = require('zod');
const { listeningPort, reportReady, serveCommands } = require('../lib/processes');

const settings = z
  .object({
    certificate: z.object({ certPem: z.string(), keyPem: z.string() }),
    answer: z.unknown(),
    backendUrl: z.string().optional(),
    forwardReview: z.boolean().optional(),
    echoUid: z.boolean().optional(),
  })
  .parse(JSON.parse(process.argv[2]));
const answer = JSON.stringify(settings.answer);
/** What the echoing answer reads of a review (the benchmarks only send well-formed ones). */
const reviewSchema = z.object({ apiVersion: z.string(), request: z.object({ uid: z.string() }) });

/** @param {z.infer<typeof reviewSchema>} review */
function echoAnswer(review) {
  return JSON.stringify({
    apiVersion: review.apiVersion,
    kind: 'AdmissionReview',
    response: { uid: review.request.uid, allowed: true },
  });
}
const backendAgent = new http.Agent({ keepAlive: true, maxSockets: 10 });

/**
 * @param {string} url
 * @param {string} object the admitted object's JSON
 * @param {(body: unknown) => void} callback
 */
function postToBackend(url, object, callback) {
  const request = http.request(
    url,
    {
      method: 'POST',
      agent: backendAgent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(object) },
    },
    (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => callback(JSON.parse(text)));
    },
  );
  request.on('error', () => callback(null));
  request.end(object);
}

/**
 * @param {string} url
 * @param {(body: unknown) => void} callback
 */
function queryBackend(url, callback) {
  http
    .get(url, { agent: backendAgent }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => callback(JSON.parse(text)));
    })
    .on('error', () => callback(null));
}

const server = https.createServer(
  { cert: settings.certificate.certPem, key: settings.certificate.keyPem, minVersion: 'TLSv1.2' },
  (request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const parsed = JSON.parse(body);
      const text = settings.echoUid ? echoAnswer(reviewSchema.parse(parsed)) : answer;
      const respond = () => {
        response.writeHead(200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(text),
        });
        response.end(text);
      };
      if (settings.backendUrl && settings.forwardReview)
        postToBackend(settings.backendUrl, JSON.stringify(parsed.request?.object ?? null), respond);
      else if (settings.backendUrl) queryBackend(settings.backendUrl, respond);
      else respond();
    });
  },
);
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => reportReady('servers/bare-https.js', { port: listeningPort(server) }));
serveCommands({ 'cpu-usage': () => process.cpuUsage() });
process.on('SIGTERM', () => process.exit(0));
