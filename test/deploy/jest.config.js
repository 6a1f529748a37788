// Jest configuration of the deploy tier (`npm run test:deploy` → test/deploy/run.sh): the main
// configuration's transform, only test/deploy, one file at a time, timeouts sized for `pulumi up`.
const path = require('node:path');
const base = require('../../jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  rootDir: path.resolve(__dirname, '../..'),
  roots: ['<rootDir>/test/deploy'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  maxWorkers: 1,
  testTimeout: 600000,
};
