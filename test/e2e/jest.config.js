// Jest configuration of the end-to-end tier (`npm run test:e2e` → test/e2e/run.sh). It extends the
// main configuration (same @swc/jest transform) but runs only test/e2e, one file at a time, with
// timeouts sized for a real kube-apiserver. The global setup builds or verifies the cached binaries.
const path = require('node:path');
const base = require('../../jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  rootDir: path.resolve(__dirname, '../..'),
  roots: ['<rootDir>/test/e2e'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  globalSetup: '<rootDir>/test/e2e/global-setup.ts',
  maxWorkers: 1,
  testTimeout: 180000,
};
