// @ts-check
'use strict';

// The controller's side of the least a two-process webhook can cost (issue 33's floor): a plain
// Node HTTP server that reads a posted object, parses it as any implementation must, and answers
// an empty constraint list. With `bare-https.js --forwardReview` in front of it, a review crosses
// the same processes, sockets and parses as Forewarn's hop and nothing else.

const { createServer } = require('node:http');
const { listeningPort, reportReady, serveCommands } = require('../lib/processes');

const ANSWER = JSON.stringify({ constraints: [] });

const server = createServer((request, response) => {
  let body = '';
  request.setEncoding('utf8');
  request.on('data', (chunk) => (body += chunk));
  request.on('end', () => {
    JSON.parse(body);
    response.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(ANSWER),
    });
    response.end(ANSWER);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => reportReady('servers/bare-backend.js', { port: listeningPort(server) }));
serveCommands({ 'cpu-usage': () => process.cpuUsage() });
process.on('SIGTERM', () => process.exit(0));
