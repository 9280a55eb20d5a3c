#!/bin/sh
# `npm start` and the image's command: the built service, its V8 heap limit set from the memory budget (MEMORY_LIMIT,
# docs/operations.md "Memory budget"). A flag rather than NODE_OPTIONS, which every node child process (the embedding
# sessions) would inherit; exec, so that the service keeps this process's id and receives its signals.
exec node $(node dist/src/memory/heap-flag.js) dist/src/http/server.js
