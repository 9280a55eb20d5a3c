/**
 * Cost of one write to the embedded graph stores as they grow: p50/p99 of one `apply` (one Episode with
 * two facets and an entity) on the episodic graph, and of one `upsert` (one entity and a relation) on the
 * knowledge graph, at 100, 10k and 50k Episodes (entities) already stored. Every write is durable (fsync)
 * before it resolves. Run with `nice -n 10 npx tsx bench/embedded-writes.ts --label after`; merges its run
 * under that label into bench/results/embedded-writes.json. Not a test: figures depend on the machine.
 *
 * Options: `--sizes 100,10000,50000`, `--writes N` (timed writes per size, default 200; fewer are taken
 * when one write exceeds 250 ms, so the old whole-file rewrite finishes), `--label NAME`.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { EmbeddedEpisodicGraphStore } from '../src/providers/episodic-graph/embedded.js'
import type { EpisodeGraph, EpisodicNode } from '../src/providers/episodic-graph/port.js'
import { EmbeddedKnowledgeGraphStore } from '../src/providers/knowledge-graph/embedded.js'
import type { KgEntity } from '../src/providers/knowledge-graph/port.js'

const args = process.argv.slice(2)
const arg = (name: string): string | undefined => {
  const at = args.indexOf(`--${name}`)
  return at >= 0 ? args[at + 1] : undefined
}
const SIZES = (arg('sizes') ?? '100,10000,50000').split(',').map(Number)
const WRITES = Number(arg('writes') ?? 200)
const LABEL = arg('label') ?? 'run'
const BULK = 5_000 // Episodes (entities) per bulk write while filling the store
const SLOW_MS = 250
const WORK_DIR = join('bench', '.work', 'embedded-writes')
const OUT = join('bench', 'results', 'embedded-writes.json')

const entity = (i: number): EpisodicNode => ({ id: `ent-${i}`, type: 'Entity', name: `实体${i}`, description: `第 ${i} 个实体` })

function episode(i: number): EpisodeGraph {
  const id = `ep-${i}`
  const facets: EpisodicNode[] = [0, 1].map((f) => ({
    id: `${id}-f${f}`, type: 'Facet', facet_type: 'topic', search_text: `话题 ${i % 500} 第${f}面`,
    anchor_text: `事件 ${i} 的第 ${f} 个方面，讨论报销与随访`, created_at: 1_700_000_000_000 + i
  }))
  return {
    episode: { id, type: 'Episode', name: `事件 ${i}`, summary: `第 ${i} 个事件的摘要：一次差旅报销的讨论`, created_at: 1_700_000_000_000 + i },
    nodes: facets,
    edges: [
      ...facets.map((f) => ({ from: id, to: f.id, relationship_name: 'has_facet', edge_text: f.search_text! })),
      { from: id, to: `ent-${i % 1000}`, relationship_name: 'involves_entity', edge_text: `实体${i % 1000}` }
    ]
  }
}

const kgEntity = (i: number): KgEntity => ({
  id: `k-${i}`, name: `实体${i}`, type: 'concept', description: `第 ${i} 个实体，关于差旅报销`, aliases: [`别名${i}`], source_chunk_ids: [`doc-${i}#0`]
})

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

async function timed(write: (i: number) => Promise<unknown>, first: number): Promise<{ p50_ms: number; p99_ms: number; writes: number }> {
  const took: number[] = []
  for (let w = 0; w < WRITES; w++) {
    const started = performance.now()
    await write(first + w)
    took.push(performance.now() - started)
    if (took.length >= 20 && took[took.length - 1]! > SLOW_MS) break
  }
  took.sort((a, b) => a - b)
  return { p50_ms: Number(percentile(took, 50).toFixed(3)), p99_ms: Number(percentile(took, 99).toFixed(3)), writes: took.length }
}

async function main(): Promise<void> {
  const rows: Record<string, unknown>[] = []
  for (const size of SIZES) {
    rmSync(WORK_DIR, { recursive: true, force: true })
    mkdirSync(WORK_DIR, { recursive: true })

    const episodic = new EmbeddedEpisodicGraphStore({ file: join(WORK_DIR, 'episodic', 'graph.json') })
    await episodic.apply('default', { entities: Array.from({ length: 1000 }, (_, i) => entity(i)) })
    for (let i = 0; i < size; i += BULK) {
      await episodic.apply('default', { episodes: Array.from({ length: Math.min(BULK, size - i) }, (_, k) => episode(i + k)) })
    }
    const ep = await timed((i) => episodic.apply('default', { episodes: [episode(i)] }), size)
    await episodic.close()

    const kg = new EmbeddedKnowledgeGraphStore({ dir: join(WORK_DIR, 'graph') })
    for (let i = 0; i < size; i += BULK) {
      await kg.upsert('default', { entities: Array.from({ length: Math.min(BULK, size - i) }, (_, k) => kgEntity(i + k)) })
    }
    const k = await timed(
      (i) => kg.upsert('default', { entities: [kgEntity(i)], relations: [{ id: `r-${i}`, source: `k-${i}`, target: 'k-0', type: 'related', weight: 1 }] }),
      size
    )
    await kg.close()
    const row = { size, episodic_apply: ep, knowledge_graph_upsert: k }
    console.log(JSON.stringify(row))
    rows.push(row)
  }
  rmSync(WORK_DIR, { recursive: true, force: true })

  const previous = existsSync(OUT) ? (JSON.parse(readFileSync(OUT, 'utf8')) as { runs: Record<string, unknown> }) : { runs: {} }
  previous.runs[LABEL] = { at: new Date().toISOString(), cpus: cpus().length, loadavg: loadavg().map((x) => Number(x.toFixed(2))), writes_per_size: WRITES, results: rows }
  writeFileSync(OUT, `${JSON.stringify({ bench: 'embedded-writes', runs: previous.runs }, null, 2)}\n`)
}

await main()
