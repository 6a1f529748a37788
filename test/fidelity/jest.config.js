// Jest configuration of the fidelity tier (`npm run test:fidelity` → test/fidelity/run.sh): Forewarn's
// verdicts against the real engines (the Kyverno CLI, the API server). It extends the main
// configuration (same @swc/jest transform) but runs only test/fidelity, one file at a time; the
// oracles' binaries come from the build-<oracle>.sh scripts run.sh calls first.
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
  testTimeout: 600000,
};
