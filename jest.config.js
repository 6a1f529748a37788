// CommonJS jest with @swc/jest (TOOLCHAIN setup B): fast, and it also transforms the ESM-only
// dependencies of @kubernetes/client-node, which jest's module system cannot load natively.
// swc does not type-check; `npm test` runs `tsc --noEmit` first.
const esmOnlyPackages = [
  '@kubernetes/client-node',
  'openid-client',
  'oauth4webapi',
  'jose',
  'jsonpath-plus',
  'rfc4648',
  'pkce-challenge',
];

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/services', '<rootDir>/infra', '<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '/test/e2e/', '/test/deploy/', '/test/fidelity/'],
  transform: {
    '^.+\\.(t|j|mj)s$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'commonjs' },
      },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnlyPackages.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  testTimeout: 20000,
  // A worker that holds more than this after a file is replaced before the next one. On 2 cores jest
  // has one worker, which otherwise carries every earlier file's garbage: a major collection of that
  // heap (over 1 GB by the end of the suite) landing inside a timed check broke the reliability
  // tests' 100 ms event-loop bound on a busy machine, on Node 20 and 22 alike (docs/decisions.md,
  // "The Rego row's long holds on Node 22"). The controller's own heap is its index, not a runner's.
  workerIdleMemoryLimit: '512MB',
};
