#!/usr/bin/env bash
# Runs the ArcadeDB server installed by scripts/setup-bolt.sh with its Bolt
# plugin, on loopback only, in the foreground (the tests start it this way).
# Usage: TOOLGRAPH_GRAPH_PASSWORD=secret123 scripts/bolt-server.sh \
#          [--bolt-port 7687] [--http-port 2480] [--root DIR] [--database toolgraph]
# The user is `root`; the database is created at start when missing. The JVM
# heap is TOOLGRAPH_BOLT_HEAP (default 2g: one transaction of the Seal-Tools
# catalog, 134k statements, did not fit in 768m beside other open databases).
set -euo pipefail
HOME_DIR="${TOOLGRAPH_BOLT_HOME:-$HOME/.cache/toolgraph/arcadedb}"
BOLT_PORT=7687
HTTP_PORT=2480
ROOT="${TMPDIR:-/tmp}/toolgraph-arcadedb"
DATABASE=toolgraph
while [ $# -gt 0 ]; do
  case "$1" in
    --bolt-port) BOLT_PORT="$2"; shift 2 ;;
    --http-port) HTTP_PORT="$2"; shift 2 ;;
    --root) ROOT="$2"; shift 2 ;;
    --database) DATABASE="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
: "${TOOLGRAPH_GRAPH_PASSWORD:?set TOOLGRAPH_GRAPH_PASSWORD (8 characters or more) for the root user}"
APP="$HOME_DIR/arcadedb_embedded"
[ -x "$APP/jre/bin/java" ] || { echo "no ArcadeDB at $HOME_DIR: run scripts/setup-bolt.sh" >&2; exit 1; }
mkdir -p "$ROOT"
cd "$ROOT"
# The parallel collector: a registration is one large transaction whose
# records live until its commit, so the collector's work is copying them;
# G1's concurrent marking took the second core from the server's own thread
# (registering 100k tools on 2 cores: server write 128 -> 112 s).
exec "$APP/jre/bin/java" -Xms64m -Xmx"${TOOLGRAPH_BOLT_HEAP:-2g}" -XX:+UseParallelGC -cp "$APP/jars/*" \
  -Darcadedb.server.rootPath="$ROOT" \
  -Darcadedb.server.rootPassword="$TOOLGRAPH_GRAPH_PASSWORD" \
  -Darcadedb.server.plugins=Bolt:com.arcadedb.bolt.BoltProtocolPlugin \
  -Darcadedb.server.defaultDatabases="$DATABASE[root]" \
  -Darcadedb.bolt.host=127.0.0.1 -Darcadedb.bolt.port="$BOLT_PORT" \
  -Darcadedb.server.httpIncomingHost=127.0.0.1 -Darcadedb.server.httpIncomingPort="$HTTP_PORT" \
  com.arcadedb.server.ArcadeDBServer
