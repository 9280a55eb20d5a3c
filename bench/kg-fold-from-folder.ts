/**
 * The knowledge graph's fold of a kept DATA_DIR's namespace, as its store runs one: the namespace's log set aside
 * (`beginCompaction`) and folded onto its snapshot by a tree's own fold-thread entry, in a worker thread of this process,
 * under the heap limits that tree's store gives it (when it gives any; a thread that runs out is run again without, as the
 * store does). Reports the log's and the snapshot's sizes, the fold's wall time and the thread's CPU, the thread's peak
 * heap used and committed, its external memory and this process's resident growth, and the written snapshot's SHA-256
 * (two trees that fold alike write the same). `--tree DIR`: another checkout (with its node_modules) instead of this one,
 * for a side-by-side of two builds on the same files; `--heap-mb N`: this old-generation limit instead (0: none). The
 * folder's files are copied first; the copy is removed at the end.
 *
 *   node --expose-gc --import tsx bench/kg-fold-from-folder.ts --from <kept DATA_DIR> [--namespace default] [--tree DIR] [--heap-mb N]
 */
import { createHash } from 'node:crypto'
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { execFileSync } from 'node:child_process'
import { DurableLog } from '../src/providers/embedded/durable-log.js'
import { readSnapshotHead } from '../src/providers/embedded/snapshot-stream.js'
import { namespaceDir } from '../src/providers/namespace.js'
import { runFoldThread } from './lib/fold-thread-run.js'

const { values } = parseArgs({ options: { from: { type: 'string' }, namespace: { type: 'string', default: 'default' }, tree: { type: 'string' }, 'heap-mb': { type: 'string' } } })
if (!values.from) throw new Error('--from <kept DATA_DIR> is required')
const MiB = 2 ** 20
const round = (x: number) => Math.round(x * 10) / 10
const identity = { kind: 'knowledge-graph', format: 2, reads: [1] }
const backend = 'knowledge-graph:memory'
const tree = resolve(values.tree ?? join(import.meta.dirname, '..'))
const source = namespaceDir(join(values.from, 'graph'), values.namespace)
const dir = await mkdtemp(join(tmpdir(), 'recall-kg-fold-'))
try {
  for (const file of ['knowledge-graph.snap', 'knowledge-graph.log']) await cp(join(source, file), join(dir, file))
  const { log, records } = await DurableLog.open({ dir, name: 'knowledge-graph', ...identity, backend })
  const logBytes = records.reduce((sum, record) => sum + record.length, 0)
  records.length = 0
  const head = readSnapshotHead(join(dir, 'knowledge-graph.snap'), identity, backend)
  const fold = (await log.beginCompaction())!
  // the heap limits the tree's store gives its fold thread, if it gives any (`foldThreadLimits`; `heldLogBytes` and `wholeMaxBytes` when it bounds what a fold holds)
  const client = await import(pathToFileURL(join(tree, 'src/providers/embedded/fold-client.ts')).href) as Record<string, unknown>
  const streaming = await import(pathToFileURL(join(tree, 'src/providers/knowledge-graph/embedded.ts')).href) as Record<string, unknown>
  type Limits = (fold: unknown, blocks: boolean, heldLogBytes?: number, wholeMaxBytes?: number) => Promise<{ heapMb: number; resourceLimits: Record<string, number> }>
  const given = values['heap-mb'] === undefined ? undefined : Number(values['heap-mb'])
  const limits = given === undefined
    ? await (client['foldThreadLimits'] as Limits | undefined)?.(fold, true, streaming['FOLD_SHARE_BYTES'] as number | undefined, streaming['FOLD_WHOLE_MAX_BYTES'] as number | undefined)
    : given > 0 ? { heapMb: given, resourceLimits: { maxOldGenerationSizeMb: given } } : undefined
  const execArgv = ['--import', pathToFileURL(createRequire(join(tree, 'package.json')).resolve('tsx')).href]
  globalThis.gc?.()
  const entry = pathToFileURL(join(tree, 'src/providers/knowledge-graph/fold-thread.ts'))
  const run = await runFoldThread(entry, { ...identity, backend, fold }, execArgv, limits?.resourceLimits)
  const written = await readFile(run.file)
  console.log(JSON.stringify({
    generated_by: 'bench/kg-fold-from-folder.ts', at: new Date().toISOString(), load_average_1m: round(loadavg()[0]!),
    tree: execFileSync('git', ['-C', tree, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(),
    log_records: fold.seq - head.seq, log_mib: round(logBytes / MiB), snapshot_payload_mib: round(head.payloadBytes / MiB),
    fold_heap_limit_mib: limits?.heapMb ?? null, fold_ran_out_of_heap: run.ranOutOfHeap,
    fold_wall_s: round(run.wallMs / 1000), fold_thread_cpu_s: round(run.cpuMs / 1000),
    fold_peak_heap_used_mib: round(run.peak.used / MiB), fold_peak_heap_committed_mib: round(run.peak.committed / MiB),
    fold_peak_external_mib: round(run.peak.external / MiB), process_rss_growth_mib: round(run.peak.rss / MiB),
    written_mib: round(written.length / MiB), written_sha256: createHash('sha256').update(written).digest('hex')
  }, null, 2))
} finally {
  await rm(dir, { recursive: true, force: true })
}
