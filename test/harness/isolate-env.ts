/**
 * Runs before each test file: the user's own saga and Temporal settings (SAGA_HOME, TEMPORAL_ADDRESS,
 * SAGA_LOG_LEVEL...) are not the tests' business; each test sets what it needs. Kept: the opt-ins that name
 * a live service for a test to reach (SAGA_GITHUB_LIVE_REPO), which are the tester's, not the user's.
 */
const TEST_OPT_INS = new Set(['SAGA_GITHUB_LIVE_REPO']);
for (const name of Object.keys(process.env)) {
  if (TEST_OPT_INS.has(name)) continue;
  if (name.startsWith('SAGA_') || name.startsWith('TEMPORAL_')) delete process.env[name];
}
