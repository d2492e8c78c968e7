#!/usr/bin/env bash
# Installs the official MCP Inspector (npm @modelcontextprotocol/inspector,
# pinned) whose CLI mode the tests drive against a live server (idempotent;
# no network request when it is complete).
# Usage: scripts/setup-inspector.sh [DIR]   (default ~/.cache/toolgraph/inspector)
set -euo pipefail
DIR="${1:-${TOOLGRAPH_INSPECTOR:-$HOME/.cache/toolgraph/inspector}}"
PIN="@modelcontextprotocol/inspector@2.12.0"
if [ -x "$DIR/node_modules/.bin/mcp-inspector" ] && [ -f "$DIR/.complete" ] && [ "$(cat "$DIR/.complete")" = "$PIN" ]; then
  echo "MCP Inspector ready at $DIR"
  exit 0
fi
command -v npm >/dev/null || { echo "npm is needed for the MCP Inspector (apt-get install nodejs npm)" >&2; exit 1; }
mkdir -p "$DIR"
[ -f "$DIR/package.json" ] || echo '{"private": true}' >"$DIR/package.json"
(cd "$DIR" && npm install --no-audit --no-fund --loglevel=error "$PIN")
"$DIR/node_modules/.bin/mcp-inspector" --version >/dev/null
echo "$PIN" >"$DIR/.complete"
echo "MCP Inspector ready at $DIR"
