// @ts-check
'use strict';

// Lets plain `node` load TypeScript test support (the Kubernetes API test server) for the watch
// benchmark: each `.ts` file is transpiled with @swc/core, as jest's transform does, without type
// checking (`npm run typecheck` covers that). Only installed packages, no build step.

const { readFileSync } = require('node:fs');
const { transformSync } = require('@swc/core');

/**
 * @param {NodeJS.Module} module
 * @param {string} filename
 */
require.extensions['.ts'] = function loadTypeScript(module, filename) {
  const { code } = transformSync(readFileSync(filename, 'utf8'), {
    filename,
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  });
  // Module#_compile is what every require hook calls, though @types/node does not declare it.
  if (!('_compile' in module) || typeof module._compile !== 'function')
    throw new Error('this Node.js has no Module#_compile to load TypeScript with');
  module._compile(code, filename);
};
