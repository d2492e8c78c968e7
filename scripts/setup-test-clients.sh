#!/usr/bin/env bash
# Installs the outside clients the tests drive, pinned, into one virtualenv
# (idempotent; no network request when it is complete):
#   mcp==2.3.0           the official MCP Python SDK (tests/it/mcp.rs)
#   schemathesis==4.32.5 property-based API testing from /openapi.json
# Usage: scripts/setup-test-clients.sh [DIR]   (default ~/.cache/toolgraph/pyenv)
set -euo pipefail
DIR="${1:-${TOOLGRAPH_PYENV:-$HOME/.cache/toolgraph/pyenv}}"
PYTHON="${PYTHON:-python3}"
PINS=("mcp==2.3.0" "schemathesis==4.32.5")
if [ -x "$DIR/bin/python" ] && [ -f "$DIR/.complete" ] && [ "$(cat "$DIR/.complete")" = "${PINS[*]}" ]; then
  echo "test clients ready at $DIR"
  exit 0
fi
"$PYTHON" -m venv "$DIR"
"$DIR/bin/python" -m pip install --quiet --disable-pip-version-check "${PINS[@]}"
"$DIR/bin/python" -c "import mcp, schemathesis" >/dev/null
echo "${PINS[*]}" >"$DIR/.complete"
echo "test clients ready at $DIR"
