#!/bin/sh
# `npm start` and the image's command: the built service, its V8 heap limit set from the memory budget (MEMORY_LIMIT,
# docs/operations.md "Memory budget"). A flag rather than NODE_OPTIONS, which every node child process (the embedding
# sessions) would inherit; exec, so that the service keeps this process's id and receives its signals.
#
# glibc's malloc: two arenas, and every block of 128 KiB or more mapped on its own, so that it goes back to the system
# when freed instead of staying in an arena (after an ingest the arenas held ~11 KB a chunk, ~3 with these; same
# section). Values the operator set are kept; the children inherit them.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}" MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_:-131072}"
exec node $(node dist/src/memory/heap-flag.js) dist/src/http/server.js
