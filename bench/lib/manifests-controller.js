// @ts-check
'use strict';

const { startController } = require('../../dist/services/controller/runtime');
const { parseControllerConfig } = require('../../dist/services/controller/config');
const { createLogger } = require('../../dist/services/logging/logger');

// The real controller as `npm start` runs it (`--manifests DIR`: runtime, manifests source, ingestion,
// adapters, index, HTTP app with helmet and metrics), listening on a free loopback port at `full`,
// for the bench servers that serve a directory of objects (servers/controller.js, risks-controller.js).

/**
 * @param {string} directory the objects, read as `--manifests`
 * @param {string[]} [extraArguments] more controller flags, e.g. `--opa-path`
 */
function startManifestsController(directory, extraArguments = []) {
  const config = parseControllerConfig(
    [
      '--manifests',
      directory,
      '--port',
      '0',
      '--address',
      '127.0.0.1',
      '--mcp=false',
      '--detail-level',
      'full',
      ...extraArguments,
    ],
    {},
  );
  return startController(
    config,
    // Errors only, on stderr: a failing route must show up instead of passing for a fast one.
    createLogger({ service: 'controller', level: 'error', destination: process.stderr }),
  );
}

module.exports = { startManifestsController };
