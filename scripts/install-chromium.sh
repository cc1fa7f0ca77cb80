#!/usr/bin/env bash
# Debian's Chromium for the Web UI test (test/integration/client/web-ui.test.ts drives it with playwright-core): installed with
# apt when missing (sudo when not root). Elsewhere, say how; SAGA_SKIP_CHROMIUM=1 skips this step.
set -euo pipefail
if [ -n "${SAGA_SKIP_CHROMIUM:-}" ] || command -v chromium >/dev/null 2>&1; then exit 0; fi
if command -v apt-get >/dev/null 2>&1; then
  SUDO=$([ "$(id -u)" -eq 0 ] || echo sudo)
  echo "Installing Debian's chromium for the Web UI test (SAGA_SKIP_CHROMIUM=1 skips this)..."
  $SUDO apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium
else
  echo "No chromium and no apt-get: install Chromium and set SAGA_CHROMIUM to it, or the Web UI test fails." >&2
fi
