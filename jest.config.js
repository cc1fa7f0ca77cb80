/**
 * Two projects: `unit` (test/unit: pure modules, files, processes; no server, seconds) and `integration`
 * (test/integration: a real Temporal dev server started once by the global setup, real git, real agents).
 * `npm run test:unit` runs the first alone; `jest` runs both.
 * A third, `server` (test/server: the production Temporal server on PostgreSQL, built from source by
 * scripts/server-stack.sh), runs only when selected: `npm run test:server` (SAGA_SERVER_SUITE=1).
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
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/harness/global-setup.ts',
      globalTeardown: '<rootDir>/test/harness/global-teardown.ts',
    },
    ...(process.env.SAGA_SERVER_SUITE
      ? [
          {
            ...shared,
            displayName: 'server',
            testMatch: ['<rootDir>/test/server/**/*.test.ts'],
            globalSetup: '<rootDir>/test/server/global-setup.ts',
            globalTeardown: '<rootDir>/test/server/global-teardown.ts',
          },
        ]
      : []),
  ],
};
