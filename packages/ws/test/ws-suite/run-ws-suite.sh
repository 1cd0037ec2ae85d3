#!/usr/bin/env bash
# Runs ws's own test suite (test/*.test.js of a ws checkout) with a heartbeat attached
# (attach-heartbeat.cjs). Needs a built @tickwheel/ws (npm run build) and mocha.
#   WS_DIR=/path/to/ws HEARTBEAT_ON=both MOCHA=/path/to/mocha packages/ws/test/ws-suite/run-ws-suite.sh
#   HEARTBEAT_OPTIONS='{"pingIntervalMs":20,"pongTimeoutMs":10}' ... -g 'can send a big binary message'
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
: "${WS_DIR:?set WS_DIR to a ws checkout}"
cd "$WS_DIR"
exec "${MOCHA:-mocha}" --throw-deprecation --require "$here/attach-heartbeat.cjs" "$@" test/*.test.js
