/**
 * graphrag latency: p50/p99 of `retrieve` at 1k, 10k and 100k entities, on the embedded store and on a real
 * Neo4j started by scripts/neo4j/server.ts. Synthetic graph: Chinese-like names of 2-4 Han characters, two
 * relations per entity on average; questions name one or two entities in filler text, one in ten names none
 * (the keyword fallback). Writes bench/results/graphrag.json.
 *
 * `memory-thread` is the embedded store in a thread of its own, as the service runs it by default (`GRAPH_THREAD`).
 *
 *   tsx bench/graphrag.ts [--sizes 1000,10000,100000] [--queries 400] [--backends memory,memory-thread,neo4j] [--out bench/results/graphrag.json]
 */
import { writeFile, mkdir } from 'node:fs/promises'
import { cpus, totalmem } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startNeo4j } from '../scripts/neo4j/server.js'
import { createGraphragAdapter } from '../adapters/graphrag/index.js'
import { buildNameMatcher } from '../adapters/graphrag/match.js'
import { createNeo4jConnection } from '../src/providers/neo4j/connection.js'
import { EmbeddedKnowledgeGraphStore } from '../src/providers/knowledge-graph/embedded.js'
import { Neo4jKnowledgeGraphStore } from '../src/providers/knowledge-graph/neo4j.js'
import { ThreadedKnowledgeGraphStore } from '../src/providers/knowledge-graph/threaded.js'
import type { KgEntity, KgRelation, KnowledgeGraphStore } from '../src/providers/knowledge-graph/port.js'
import { rng as prng } from './lib/synthetic.js'

const HERE = dirname(fileURLToPath(import.meta.url))
const HAN = '安北长城大东方福光国海华江金京康乐林龙明南平齐青庆山上盛天通文西祥新兴阳永元云正中州子德和信达利泰成宏鑫瑞丰源恒昌隆嘉诚博远星辰月风雨雪湖河岭峰桥港湾田园松柏竹梅兰菊'
const FILLER = ['请问', '和', '之间有什么关系', '在哪里', '的情况如何', '最近', '怎么样', '有哪些合作', '是什么', '相比']

function makeGraph(size: number, random: () => number): { entities: KgEntity[]; relations: KgRelation[] } {
  const names = new Set<string>()
  const entities: KgEntity[] = []
  while (entities.length < size) {
    const length = 2 + Math.floor(random() * 3) + (size > 20_000 ? 1 : 0)
    let name = ''
    for (let i = 0; i < length; i++) name += HAN[Math.floor(random() * HAN.length)]
    if (names.has(name)) continue
    names.add(name)
    const id = `e${entities.length}`
    entities.push({
      id,
      name,
      aliases: random() < 0.2 ? [`${name}集团`] : [],
      type: 'organization',
      description: `${name}是一家位于${HAN[Math.floor(random() * HAN.length)]}${HAN[Math.floor(random() * HAN.length)]}的机构`,
      source: `synthetic/${id}.md`,
      source_chunk_ids: [`${id}#0`]
    })
  }
  const relations: KgRelation[] = []
  for (let i = 0; i < size * 2; i++) {
    const s = Math.floor(random() * size)
    let t = Math.floor(random() * size)
    if (t === s) t = (t + 1) % size
    relations.push({ id: `r${i}`, source: `e${s}`, target: `e${t}`, type: random() < 0.5 ? 'partner_of' : 'owns', weight: Math.round(random() * 100) / 100 })
  }
  return { entities, relations }
}

function makeQuestions(entities: readonly KgEntity[], count: number, random: () => number): string[] {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!
  const questions: string[] = []
  for (let i = 0; i < count; i++) {
    if (i % 10 === 9) {
      questions.push(`${pick(FILLER)}位于${pick([...HAN])}${pick([...HAN])}的机构${pick(FILLER)}`)
    } else if (i % 2 === 0) {
      questions.push(`${pick(FILLER)}${pick(entities).name}${pick(FILLER)}`)
    } else {
      questions.push(`${pick(entities).name}${pick(FILLER)}${pick(entities).name}${pick(FILLER)}`)
    }
  }
  return questions
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[index]!
}

const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits

async function load(store: KnowledgeGraphStore, graph: { entities: KgEntity[]; relations: KgRelation[] }): Promise<number> {
  const started = performance.now()
  const step = 10_000
  for (let i = 0; i < graph.entities.length; i += step) await store.upsert('default', { entities: graph.entities.slice(i, i + step) })
  for (let i = 0; i < graph.relations.length; i += step) await store.upsert('default', { relations: graph.relations.slice(i, i + step) })
  return performance.now() - started
}

async function measure(backend: string, store: KnowledgeGraphStore, size: number, queries: number) {
  const random = prng(size)
  const graph = makeGraph(size, random)
  const loadMs = await load(store, graph)
  const adapter = createGraphragAdapter({ graph: store })
  const buildStarted = performance.now()
  await adapter.warm('default')
  const matcherMs = performance.now() - buildStarted
  const questions = makeQuestions(graph.entities, queries, random)
  // Warm-up: JIT on both sides, Neo4j's query plans.
  for (const q of questions.slice(0, Math.min(100, queries))) await adapter.retrieve({ query: q, top_k: 10 })
  const times: number[] = []
  const named: number[] = []
  const fallback: number[] = []
  let items = 0
  for (const q of questions) {
    const started = performance.now()
    const result = await adapter.retrieve({ query: q, top_k: 10 })
    const ms = performance.now() - started
    times.push(ms)
    ;(result.items[0]?.metadata['matched_by'] === 'keyword' ? fallback : named).push(ms)
    items += result.items.length
  }
  for (const list of [times, named, fallback]) list.sort((a, b) => a - b)

  // The name lookup alone, without the store: what the automaton costs per question.
  const matcher = buildNameMatcher(graph.entities)
  const matchTimes: number[] = []
  for (const q of questions) {
    const started = performance.now()
    matcher.match(q)
    matchTimes.push(performance.now() - started)
  }
  matchTimes.sort((a, b) => a - b)

  const row = {
    backend,
    entities: size,
    relations: graph.relations.length,
    queries,
    p50_ms: round(percentile(times, 50)),
    p99_ms: round(percentile(times, 99)),
    mean_ms: round(times.reduce((a, b) => a + b, 0) / times.length),
    named_queries: named.length,
    named_p50_ms: round(percentile(named, 50)),
    named_p99_ms: round(percentile(named, 99)),
    fallback_queries: fallback.length,
    fallback_p50_ms: round(percentile(fallback, 50)),
    fallback_p99_ms: round(percentile(fallback, 99)),
    mean_items: round(items / queries, 2),
    name_match_p50_us: round(percentile(matchTimes, 50) * 1000, 1),
    name_match_p99_us: round(percentile(matchTimes, 99) * 1000, 1),
    matcher_build_ms: round(matcherMs, 1),
    load_ms: round(loadMs, 0)
  }
  process.stdout.write(`${JSON.stringify(row)}\n`)
  return row
}

async function main(argv: string[]) {
  const value = (flag: string, fallback: string) => {
    const i = argv.indexOf(flag)
    return i >= 0 ? argv[i + 1] ?? fallback : fallback
  }
  const sizes = value('--sizes', '1000,10000,100000').split(',').map(Number)
  const queries = Number(value('--queries', '400'))
  const backends = value('--backends', 'memory,neo4j').split(',')
  const rows = []

  if (backends.includes('memory')) {
    for (const size of sizes) rows.push(await measure('memory', new EmbeddedKnowledgeGraphStore(), size, queries))
  }
  if (backends.includes('memory-thread')) {
    for (const size of sizes) {
      const store = new ThreadedKnowledgeGraphStore()
      rows.push(await measure('memory-thread', store, size, queries))
      await store.close()
    }
  }
  let neo4jVersion: string | undefined
  if (backends.includes('neo4j')) {
    const server = await startNeo4j({ heap: '2g' })
    try {
      for (const size of sizes) {
        const connection = createNeo4jConnection({ uri: server.uri, timeoutMs: 120_000 })
        neo4jVersion ??= (await connection.driver.getServerInfo()).agent
        const store = new Neo4jKnowledgeGraphStore({ connection, labelPrefix: `Bench${size}` })
        rows.push(await measure('neo4j', store, size, queries))
        await store.close()
      }
    } finally {
      await server.stop()
    }
  }

  const report = {
    generated_by: 'bench/graphrag.ts',
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', memory_gib: Math.round(totalmem() / 2 ** 30), node: process.version },
    neo4j: neo4jVersion ?? null,
    method:
      'Sequential retrieve() calls (top_k 10) after 100 warm-up calls; questions name 1-2 entities, 1 in 10 names none (keyword fallback). Neo4j on 127.0.0.1 with 2 GiB heap, 64 MiB page cache.',
    targets: { embedded_p50_ms_at_10k: 5, neo4j_p50_ms_at_10k: 15 },
    results: rows
  }
  const out = value('--out', join(HERE, 'results', 'graphrag.json'))
  await mkdir(dirname(out), { recursive: true })
  await writeFile(out, `${JSON.stringify(report, null, 2)}\n`)
  process.stdout.write(`wrote ${out}\n`)
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
  process.exit(1)
})
