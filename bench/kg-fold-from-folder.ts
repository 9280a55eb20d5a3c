/**
 * The knowledge graph's block fold (`foldKnowledgeGraphInBlocks`, what its fold thread runs) of a kept DATA_DIR's
 * namespace: its log folded onto its snapshot in this thread, as the fold thread would fold them if the whole log had
 * been set aside. Reports the log's and the snapshot's sizes, the fold's wall time, and the heap in use when it ends,
 * before any collection (what the fold held, its garbage included): the figure behind a fold thread's heap growing with
 * the namespace in a 1M ingest (bench/results/memory.log.md, "A fourth ingest to 1M"). The folder's files are copied
 * first (opening a log may cut a torn tail); the copy is removed at the end.
 *
 *   node --expose-gc --max-old-space-size=8000 --import tsx bench/kg-fold-from-folder.ts --from <kept DATA_DIR> [--namespace default]
 */
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { getHeapStatistics } from 'node:v8'
import { DurableLog } from '../src/providers/embedded/durable-log.js'
import { readSnapshotHead, SnapshotFileWriter } from '../src/providers/embedded/snapshot-stream.js'
import { foldKnowledgeGraphInBlocks } from '../src/providers/knowledge-graph/streaming-fold.js'
import { namespaceDir } from '../src/providers/namespace.js'

const { values } = parseArgs({ options: { from: { type: 'string' }, namespace: { type: 'string', default: 'default' } } })
if (!values.from) throw new Error('--from <kept DATA_DIR> is required')
const MiB = 2 ** 20
const round = (x: number) => Math.round(x * 10) / 10
const identity = { kind: 'knowledge-graph', format: 2, reads: [1] }
const backend = 'knowledge-graph:memory'
const source = namespaceDir(join(values.from, 'graph'), values.namespace)
const dir = await mkdtemp(join(tmpdir(), 'recall-kg-fold-'))
try {
  for (const file of ['knowledge-graph.snap', 'knowledge-graph.log']) await cp(join(source, file), join(dir, file))
  const { records } = await DurableLog.open({ dir, name: 'knowledge-graph', ...identity, backend })
  const head = readSnapshotHead(join(dir, 'knowledge-graph.snap'), identity, backend)
  const logBytes = records.reduce((sum, record) => sum + record.length, 0)
  globalThis.gc?.()
  const before = getHeapStatistics().used_heap_size
  const out = new SnapshotFileWriter(join(dir, 'folded.snap'), 1, identity)
  const t = performance.now()
  foldKnowledgeGraphInBlocks(head, records, out, backend)
  const seconds = (performance.now() - t) / 1000
  const heldAtEnd = getHeapStatistics().used_heap_size - before
  const written = out.finish()
  console.log(JSON.stringify({
    generated_by: 'bench/kg-fold-from-folder.ts', at: new Date().toISOString(), load_average_1m: round(loadavg()[0]!),
    log_records: records.length, log_mib: round(logBytes / MiB), snapshot_payload_mib: round(head.payloadBytes / MiB),
    fold_seconds: round(seconds), heap_in_use_at_fold_end_mib: round(heldAtEnd / MiB), per_log_byte: round(heldAtEnd / logBytes),
    written_mib: round(written / MiB)
  }, null, 2))
} finally {
  await rm(dir, { recursive: true, force: true })
}
