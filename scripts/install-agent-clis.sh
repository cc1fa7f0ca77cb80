#!/usr/bin/env bash
# The real agent CLIs, for tests only (never runtime dependencies), at the versions the built-in presets were
# verified with (src/domain/config/agent-presets.ts): the npm ones into tools/agent-clis, aider into a venv in
# tools/aider-venv, and one folder of links to them all, tools/agent-bin, for PATH. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

NPM_PACKAGES=(
  "@anthropic-ai/claude-code@2.1.328"
  "@openai/codex@0.169.0"
  "@google/gemini-cli@0.61.0"
  "opencode-ai@1.18.33"
)
AIDER_PACKAGE="aider-chat==0.86.2"

stamp=tools/agent-clis/.installed
if [ "$(cat "$stamp" 2>/dev/null)" != "${NPM_PACKAGES[*]}" ]; then
  mkdir -p tools/agent-clis
  [ -f tools/agent-clis/package.json ] || echo '{"private": true}' >tools/agent-clis/package.json
  echo "Installing agent CLIs for tests: ${NPM_PACKAGES[*]}"
  npm install --no-audit --no-fund --loglevel=error --prefix tools/agent-clis "${NPM_PACKAGES[@]}"
  echo "${NPM_PACKAGES[*]}" >"$stamp"
fi

aider_stamp=tools/aider-venv/.installed
if [ "$(cat "$aider_stamp" 2>/dev/null)" != "$AIDER_PACKAGE" ]; then
  echo "Installing $AIDER_PACKAGE into tools/aider-venv (about a minute)"
  rm -rf tools/aider-venv
  python3 -m venv tools/aider-venv
  tools/aider-venv/bin/pip install --quiet --disable-pip-version-check "$AIDER_PACKAGE"
  echo "$AIDER_PACKAGE" >"$aider_stamp"
fi

# Links only: putting the venv's bin on PATH would also put its python first.
mkdir -p tools/agent-bin
for cli in claude codex gemini opencode; do ln -sfn "../agent-clis/node_modules/.bin/$cli" "tools/agent-bin/$cli"; done
ln -sfn ../aider-venv/bin/aider tools/agent-bin/aider
for cli in claude codex gemini opencode aider; do
  printf '%s: %s\n' "$cli" "$("tools/agent-bin/$cli" --version 2>&1 | tail -n 1)"
done
