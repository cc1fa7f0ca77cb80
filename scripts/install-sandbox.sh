#!/usr/bin/env bash
# The agent sandbox's tools (README "Security model"): bubblewrap confines each agent, check and set-up
# command; socat forwards the allowed model-API endpoints into it. Installed with apt when missing (sudo
# when not root); elsewhere, say how. Without them agents run only with `sandbox: none` in saga.config.yaml.
set -euo pipefail
if command -v bwrap >/dev/null 2>&1 && command -v socat >/dev/null 2>&1; then exit 0; fi
if [ "$(uname -s)" != Linux ]; then
  echo "No agent sandbox for $(uname -s) yet: set 'sandbox: none' in saga.config.yaml to run agents unconfined." >&2
  exit 0
fi
if command -v apt-get >/dev/null 2>&1; then
  SUDO=$([ "$(id -u)" -eq 0 ] || echo sudo)
  echo "Installing bubblewrap and socat (the agent sandbox)..."
  $SUDO apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends bubblewrap socat
else
  echo "Install bubblewrap and socat with your package manager: saga confines agents with them." >&2
fi
