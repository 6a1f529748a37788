// @ts-check
'use strict';

// Baseline for the controller reads: express with one route answering a fixed JSON body of the
// size the controller answers, and nothing else (no helmet, no metrics, no index).
// argv[2]: JSON `{"bodies": {"<path>": <body object>}}`.

const { createServer } = require('node:http');
const express = require('express');
const { z } = require('zod');
const { listeningPort, reportReady, serveCommands } = require('../lib/processes');

const { bodies } = z.object({ bodies: z.record(z.unknown()) }).parse(JSON.parse(process.argv[2]));
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
for (const [path, body] of Object.entries(bodies)) app.get(path, (_request, response) => response.json(body));

const server = createServer(app);
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => reportReady('servers/bare-express.js', { port: listeningPort(server) }));
serveCommands({ 'cpu-usage': () => process.cpuUsage() });
process.on('SIGTERM', () => process.exit(0));
