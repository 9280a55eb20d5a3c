#!/bin/bash
# bench/memory.ts in a base tree and in this one, both started together (the same command, Node 24 of this tree, the
# flags start.sh gives), so that each sees the same load; each writes its result file into OUTDIR.
#   bench/quiet/memory-pair.sh BASE_DIR CHUNKS OUTDIR [NAME]
# e.g. bench/quiet/memory-pair.sh /tmp/base-6b67885 30000 bench/results ingest-heap-30k
#   -> OUTDIR/NAME-base.json, OUTDIR/NAME-this.json
set -e
base=$(cd "$1" && pwd) chunks=$2 out=$(mkdir -p "$3" && cd "$3" && pwd) name=${4:-memory-pair-$2}
here=$(cd "$(dirname "$0")/../.." && pwd)
node=${NODE24:-$here/.cache/node/bin/node}
shared=${RECALL_SHARED_DIR:-$(cd "$here/../shared" && pwd)}
run() { # tree arm
  cd "$1" && RECALL_SHARED_DIR=$shared "$node" --expose-gc --heap-growing-percent=50 --max-old-space-size=4096 --import tsx bench/memory.ts \
    --chunks "$chunks" --checkpoint "$chunks" --out "$out/$name-$2.json" 2>"/tmp/memory-pair-$name-$2.err"
}
run "$base" base & b=$!
run "$here" this & t=$!
rc=0
wait $b || { rc=$?; echo "base failed: $(tail -3 "/tmp/memory-pair-$name-base.err")" >&2; }
wait $t || { rc=$?; echo "this failed: $(tail -3 "/tmp/memory-pair-$name-this.err")" >&2; }
exit $rc
