#!/bin/bash
# One bench in the Node 20 tree (made by bench/node-runtimes.ts) and in this tree on Node 24, in the order base, this,
# this, base per round; prints one line per run: arm, Node version, the figures picked from the bench's result file.
#   bench/quiet/node-pair.sh ROUNDS BENCH RESULT_FILE PY_EXPR -- BENCH_ARGS...
# e.g. bench/quiet/node-pair.sh 3 ingest-rate bench/results/ingest-rate.json "r['chunks_per_second']" -- --chunks 4000
# PY_EXPR reads the result file as `r`. Each tree's result file is put back as it was after its run.
set -e
rounds=$1 bench=$2 file=$3 expr=$4; shift 5
here=$(cd "$(dirname "$0")/../.." && pwd)
N24=${NODE24:-$here/.cache/node/bin/node} N20=${NODE20:-/usr/bin/node} B=${BASE:-$here/.cache/node20-base}
run() { # tree node arm bench-args...
  local tree=$1 node=$2 arm=$3 rc=0; shift 3
  cd "$tree"
  cp "$file" "/tmp/node-pair-keep-$arm.json"
  env LOG_LEVEL=silent RECALL_SHARED_DIR="${RECALL_SHARED_DIR:-$here/../shared}" EMBEDDING_POOL="${EMBEDDING_POOL:-processes}" \
    "$node" --import tsx "bench/$bench.ts" "$@" >/dev/null 2>"/tmp/node-pair-$arm.err" || rc=$?
  [ $rc = 0 ] && echo "$arm $("$node" --version) $(python3 -c "import json;r=json.load(open('$file'));print(json.dumps($expr))") load $(cut -d' ' -f1 /proc/loadavg)"
  cp "/tmp/node-pair-keep-$arm.json" "$file"
  [ $rc = 0 ] || { echo "$arm failed: $(tail -3 "/tmp/node-pair-$arm.err")" >&2; exit 1; }
}
args=("$@")
for ((r = 0; r < rounds; r++)); do
  for arm in base this this base; do
    if [ $arm = base ]; then run "$B" "$N20" base "${args[@]}"; else run "$here" "$N24" this "${args[@]}"; fi
  done
done
