// Jest configuration of the fidelity tier (`npm run test:fidelity` → test/fidelity/run.sh). It extends
// the main configuration (same @swc/jest transform) but runs only test/fidelity, whose tests compare
// Forewarn's engines with Go-built oracles that run.sh provides (FOREWARN_<ORACLE>_BIN).
const path = require('node:path');
const base = require('../../jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  rootDir: path.resolve(__dirname, '../..'),
  roots: ['<rootDir>/test/fidelity'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  maxWorkers: 1,
  testTimeout: 120000,
};
