#!/usr/bin/env bash
# The real agent CLIs, for tests only (never runtime dependencies): installed into tools/agent-clis at the
# versions the built-in presets were verified with (src/domain/agent-presets.ts). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

DEST=tools/agent-clis
PACKAGES=(
  "@anthropic-ai/claude-code@2.1.328"
  "@openai/codex@0.169.0"
  "@google/gemini-cli@0.61.0"
  "opencode-ai@1.18.33"
)
stamp="$DEST/.installed"
want="${PACKAGES[*]}"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "Agent CLIs already installed in $DEST"
else
  mkdir -p "$DEST"
  [ -f "$DEST/package.json" ] || echo '{"private": true}' >"$DEST/package.json"
  echo "Installing the agent CLIs for tests into $DEST: ${PACKAGES[*]}"
  npm install --no-audit --no-fund --loglevel=error --prefix "$DEST" "${PACKAGES[@]}"
  echo "$want" >"$stamp"
fi
for cli in claude codex gemini opencode; do
  printf '%s: %s\n' "$cli" "$("$DEST/node_modules/.bin/$cli" --version 2>&1 | head -n 1)"
done
