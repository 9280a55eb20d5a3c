#!/bin/sh
# Runs a command with the project's Node first on PATH when scripts/setup.sh installed one (.cache/node/, because
# the Node on PATH is older than .node-version's major), so that `npm run`, `npm start` and what they spawn use it.
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -x "$root/.cache/node/bin/node" ]; then PATH="$root/.cache/node/bin:$PATH"; export PATH; fi
exec "$@"
