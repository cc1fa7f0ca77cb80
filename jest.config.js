/**
 * Two projects: `unit` (test/unit: pure modules, files, processes; no server, seconds) and `integration`
 * (test/*.test.ts: a real Temporal dev server started once by the global setup, real git, real agents).
 * `npm run test:unit` runs the first alone; `jest` runs both.
 */
const shared = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  // Tests never see the user's own SAGA_* / TEMPORAL_* settings (a SAGA_HOME of theirs changed results).
  setupFiles: ['<rootDir>/test/harness/isolate-env.ts'],
};

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 120_000,
  maxWorkers: 2,
  verbose: false,
  reporters: ['default', '<rootDir>/test/harness/summary-reporter.js'],
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/*.test.ts'],
      globalSetup: '<rootDir>/test/harness/global-setup.ts',
      globalTeardown: '<rootDir>/test/harness/global-teardown.ts',
    },
  ],
};
