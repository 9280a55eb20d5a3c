/**
 * The derived Episodes' graph alone (issue 44, item 1): the embedded episodic graph store of this tree and of a base
 * tree opened on copies of the same files (a kept DATA_DIR's `episodic/`), interleaved, and for each: the heap it holds
 * once loaded (after full collections, against the heap before it was opened), in bytes a chunk (one derived Facet a
 * chunk); the CPU of opening it (the snapshot read and the log replayed, up to the first read); and the CPU of the
 * graph's part of an episodic query (`project` over facet and point ids drawn with a fixed seed, as the scorer asks).
 * The answers of both trees' projections are compared too (the ids are those the memory bench's documents give). The
 * vector records are not here (`bench/memory.ts`'s drop). Beside `bench/episode-memory.ts`, which derives its own
 * Episodes and digests every answer: this one reads what an ingest kept, so a kept 100k DATA_DIR is measured without
 * ingesting it again.
 *
 *   node --expose-gc --import tsx bench/episode-memory-from-data.ts --base DIR --data DIR[,DIR…] [--rounds 2] [--queries 300] [--out FILE]
 */
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { loadTree, type Tree } from './lib/tree.js'
import { median } from './lib/median.js'
import { seededRandom } from '../src/evaluation/statistics.js'

const { values } = parseArgs({
  options: { base: { type: 'string' }, data: { type: 'string' }, rounds: { type: 'string', default: '2' }, queries: { type: 'string', default: '300' }, out: { type: 'string' } }
})
if (!values.base || !values.data) throw new Error('--base DIR --data DIR[,DIR…] (each a DATA_DIR whose episodic/ is read from a copy)')
const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with node --expose-gc')
const trees = [loadTree('base', values.base), loadTree('this', '.')]
const MiB = 2 ** 20
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)
const heap = () => { gc!(); gc!(); return process.memoryUsage().heapUsed }
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }

/** Six facet and point ids a query starts from, `n` times, drawn with a fixed seed. */
function sample(ids: string[], n: number): string[][] {
  const next = seededRandom(44)
  return Array.from({ length: n }, () => Array.from({ length: 6 }, () => ids[Math.floor(next() * ids.length)]!))
}

interface Arm { bytes: number; open_cpu_ms: number; query_cpu_ms: number; answers: string }

async function measure(tree: Tree, dataDir: string, queries: number): Promise<Arm & { facets: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'recall-bench-episodes-'))
  await cp(join(dataDir, 'episodic'), dir, { recursive: true })
  const { EmbeddedEpisodicGraphStore } = await tree.module('src/providers/episodic-graph/embedded.ts')
  const before = heap()
  const c0 = cpuMs()
  // a huge floor: opening folds nothing, so both trees read the same files
  const store = new EmbeddedEpisodicGraphStore({ file: join(dir, 'graph.json'), compactionFloorBytes: 1e15, foldLogBytes: 1e15 })
  const counts = await store.countByType('default') as Record<string, number>
  const openCpu = cpuMs() - c0
  const bytes = heap() - before
  // the memory bench's documents are mem-<7 digits>, 8 sections each: their Facets and points by id (unknown ids are skipped)
  const ids: string[] = []
  for (let k = 0; k < (counts['Episode'] ?? 0); k++) {
    const ep = `d:ep:mem-${String(k).padStart(7, '0')}`
    for (let f = 1; f <= 8; f++) ids.push(`${ep}/f${f}`, `${ep}/f${f}/p1`, `${ep}/f${f}/p2`)
  }
  const asks = sample(ids, queries)
  const answers: string[] = []
  const c1 = cpuMs()
  for (const relevant of asks) {
    const best = new Map(relevant.map((id, i) => [id, i * 0.1]))
    const f = await store.project('default', { relevant_ids: relevant, best_by_id: best, max_ids: 40, episode_hit_ids: [] })
    answers.push(`${[...f.nodes.keys()].sort().join(',')}|${f.edges.length}`)
  }
  const queryCpu = cpuMs() - c1
  await store.close()
  await rm(dir, { recursive: true, force: true })
  return { facets: counts['Facet'] ?? 0, bytes, open_cpu_ms: openCpu, query_cpu_ms: queryCpu, answers: answers.join('\n') }
}

const results: Record<string, unknown>[] = []
for (const data of values.data.split(',')) {
  const arms: Record<string, Arm[]> = { base: [], this: [] }
  let facets = 0
  for (let r = 0; r < Number(values.rounds); r++) {
    for (const tree of r % 2 === 0 ? trees : [...trees].reverse()) {
      const m = await measure(tree, data, Number(values.queries))
      facets = m.facets
      arms[tree.name]!.push(m)
      log(`${data} ${tree.name} round ${r + 1}: ${round(m.bytes / MiB)} MiB, ${Math.round(m.bytes / m.facets)} B a chunk, open ${Math.round(m.open_cpu_ms)} ms CPU, ${values.queries} projections ${Math.round(m.query_cpu_ms)} ms CPU, load ${round(loadavg()[0]!)}`)
    }
  }
  const of = (name: string) => {
    const a = arms[name]!
    return { bytes_a_chunk: a.map((x) => Math.round(x.bytes / facets)), open_cpu_ms: a.map((x) => Math.round(x.open_cpu_ms)), query_cpu_ms: a.map((x) => Math.round(x.query_cpu_ms)) }
  }
  const [b, t] = [of('base'), of('this')]
  results.push({
    data, chunks_one_facet_each: facets, base: b, this: t,
    ratio_this_to_base: {
      bytes_a_chunk: round(median(t.bytes_a_chunk) / median(b.bytes_a_chunk), 3),
      open_cpu: round(median(t.open_cpu_ms) / median(b.open_cpu_ms), 2),
      query_cpu: round(median(t.query_cpu_ms) / median(b.query_cpu_ms), 2)
    },
    projections_with_nodes: arms['base']![0]!.answers.split('\n').filter((a) => !a.startsWith('|')).length,
    same_projections: arms['this']!.every((x) => x.answers === arms['base']![0]!.answers) && arms['base']!.every((x) => x.answers === arms['base']![0]!.answers),
    load_1m_at_end: round(loadavg()[0]!)
  })
  log(JSON.stringify(results.at(-1)))
}
const report = { generated_by: 'bench/episode-memory-from-data.ts', at: new Date().toISOString(), trees: trees.map((t) => ({ name: t.name, commit: t.commit })), queries: Number(values.queries), results }
if (values.out) await writeFile(values.out, `${JSON.stringify(report, null, 2)}\n`)
console.log(JSON.stringify(report, null, 2))
