/**
 * Runs before each test file: the user's own saga and Temporal settings (SAGA_HOME, TEMPORAL_ADDRESS,
 * SAGA_LOG_LEVEL...) are not the tests' business; each test sets what it needs.
 */
for (const name of Object.keys(process.env)) {
  if (name.startsWith('SAGA_') || name.startsWith('TEMPORAL_')) delete process.env[name];
}
