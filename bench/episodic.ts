/**
 * Episodic latency at 1k and 10k Episodes, the embedded graph and Neo4j side by side in one run over the
 * same Episodes and one shared embedded vector store, one client: the query embedding alone, the search
 * after embedding (vector recall over the six collections, two-phase projection, scoring, description of
 * the shown Episodes, output), and the whole `retrieve` including the embedding, with the Neo4j/embedded
 * ratio of the p50s; the graph store's own calls (`project`, `describe`) within the search. Also the
 * ingestion rate. With `--thread true` (the default) a third arm, `embedded-thread`: the embedded graph in a thread of its
 * own (`EPISODIC_THREAD`, the service's default on more than one core), written the same Episodes. Writes
 * bench/results/episodic.json.
 *
 *   npx tsx bench/episodic.ts [--sizes 1000,10000] [--queries 200] [--neo4j true|false] [--thread true|false] [--threads N] [--out FILE]
 *   npx tsx bench/episodic.ts --base ../wt-before [--sizes 1000] [--queries 200]
 *
 * With `--base DIR` (a checkout of an earlier main with node_modules and models linked) the arms are the two trees on
 * the embedded stores: each tree's own ingest, stores and adapter (loaded from its sources into this process) over the
 * same Episodes and vectors, measured alternately query by query; bench/results/episodic-vs-base.json gives both and
 * the ratios this ÷ base.
 *
 * Episodes are synthetic (3 facets of 2 points each, 2 entities from a shared pool, about 25 vectors per
 * Episode). Stored texts are composed from a vocabulary of phrases whose vectors come from the real
 * model; a stored text's vector is the sum of its phrases' vectors plus Gaussian noise, renormalised.
 * Embedding 250k texts with the local model would take hours here, and exact-cosine cost does not depend
 * on the values. Queries are embedded by the real model.
 */
import { cpus, loadavg, totalmem } from 'node:os'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { DEFAULT_EPISODIC_CONFIG } from '../adapters/episodic/config.js'
import { createEpisodicAdapter } from '../adapters/episodic/index.js'
import { preprocessQuery } from '../adapters/episodic/preprocess.js'
import { buildEpisodeGraphs } from '../src/corpus/episodes/graph-building.js'
import type { EpisodesIngestBody } from '../src/corpus/episodes/schema.js'
import { LocalEmbedder } from '../src/providers/embedder/local.js'
import type { Embedder } from '../src/providers/embedder/port.js'
import { Neo4jEpisodicGraphStore } from '../src/providers/episodic-graph/neo4j.js'
import type { EpisodicGraphStore } from '../src/providers/episodic-graph/port.js'
import { ThreadedEpisodicGraphStore } from '../src/providers/episodic-graph/threaded.js'
import { createNeo4jConnection } from '../src/providers/neo4j/connection.js'
import { DEFAULT_NAMESPACE } from '../src/providers/namespace.js'
import { startNeo4j } from '../scripts/neo4j/server.js'
import { rng } from './lib/synthetic.js'
import { loadTree, type Tree } from './lib/tree.js'
import { benchEnv, borrowed, openBenchServices } from './lib/corpus.js'

const ROOT = resolve(import.meta.dirname, '..')
/** Every arm reads the namespace the vectors were ingested into. */
const NS = DEFAULT_NAMESPACE
const MODEL_DIR = resolve(process.env['MODEL_DIR'] ?? join(ROOT, 'models'))
const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,10000' }, queries: { type: 'string', default: '200' }, neo4j: { type: 'string', default: 'true' },
    threads: { type: 'string' }, out: { type: 'string' }, base: { type: 'string' }, thread: { type: 'string', default: 'true' }
  }
})
const SIZES = args.sizes.split(',').map(Number)
const QUERY_RUNS = Number(args.queries)

const TOPICS = [
  '流式返回', '鉴权中间件', '订单系统', '支付回调', '消息队列', '缓存穿透', '数据库迁移', '灰度发布', '日志采集', '监控告警',
  '搜索排序', '推荐召回', '用户画像', '权限模型', '接口限流', '配置中心', '服务拆分', '容量规划', '故障演练', '成本优化',
  '前端性能', '移动端崩溃', '报表导出', '财务对账', '合同审批', '招聘进度', '年假安排', '培训计划', '预算评审', '季度复盘'
]
const FACETS = ['变更边界', '风险', '结论', '指标', '计划', '原因', '决策', '约束']
const POINTS = ['不能改', '要回滚', '需要评审', '已上线', '延期', '成本超支', '性能达标', '待确认']
const ENTITY_WORDS = ['API', 'Kafka', 'Redis', 'MySQL', 'Nginx', 'Kong', 'Grafana', 'Elasticsearch', 'Flink', 'Spark']
const PHRASES = [...TOPICS, ...FACETS, ...POINTS, ...ENTITY_WORDS]
const QUERIES = [
  '流式返回那个任务有哪些约束', '鉴权中间件为什么不能改', '订单系统的支付回调风险', '消息队列选型结论', '缓存穿透的原因',
  '数据库迁移计划延期了吗', '灰度发布要回滚', '上周的监控告警复盘', 'Kafka 消费延迟的决策', '接口限流指标达标了吗',
  '去年的成本优化结论', '年假安排', '预算评审需要评审什么', 'Redis 缓存穿透', '最近的故障演练'
]

function syntheticBody(n: number, seed = 7): EpisodesIngestBody {
  const r = rng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const entityCount = Math.max(10, Math.floor(n / 5))
  const entities = Array.from({ length: entityCount }, (_, k) => ({ id: `N${k}`, name: `${ENTITY_WORDS[k % ENTITY_WORDS.length]}-${k}`, description: pick(TOPICS) }))
  const day = Date.parse('2025-01-01T00:00:00Z')
  const episodes = Array.from({ length: n }, (_, i) => {
    const a = pick(TOPICS)
    const b = pick(TOPICS)
    const start = day + Math.floor(r() * 480) * 86_400_000
    return {
      id: `E${i}`, name: `${a}${b}第${i}号`, summary: `【目标】${a}与${b}的改造。【结论】${pick(POINTS)}，${pick(ENTITY_WORDS)}。`,
      mentioned_time_start: new Date(start).toISOString(), mentioned_time_end: new Date(start + 86_400_000).toISOString(),
      mentioned_time_confidence: 0.8,
      entities: [`N${Math.floor(r() * entityCount)}`, `N${Math.floor(r() * entityCount)}`].filter((x, k, xs) => xs.indexOf(x) === k),
      facets: Array.from({ length: 3 }, (_, j) => {
        const f = FACETS[(i + j) % FACETS.length]!
        return {
          id: `E${i}.F${j}`, search_text: `${a}${f}`, anchor_text: `${a}${f}：${pick(POINTS)}`, description: `${b}${pick(POINTS)}`,
          points: Array.from({ length: 2 }, (_, k) => ({ id: `E${i}.F${j}.P${k}`, search_text: `${a}${pick(POINTS)}` }))
        }
      })
    }
  })
  return { entities, episodes }
}

/** Stored texts get vectors composed from the real vectors of the phrases they contain. */
class ComposedEmbedder implements Embedder {
  readonly model = 'composed-bge-small-zh-v1.5'
  readonly dimensions: number
  private seed = 1
  constructor(private readonly phrases: Map<string, Float32Array>, private readonly real: Embedder) {
    this.dimensions = real.dimensions
  }
  embedQueries(texts: readonly string[]): Promise<Float32Array[]> {
    return this.real.embedQueries(texts)
  }
  async embedPassages(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => {
      const r = rng(this.seed++)
      const v = new Float32Array(this.dimensions)
      for (const [p, pv] of this.phrases) if (t.includes(p)) for (let d = 0; d < v.length; d++) v[d]! += pv[d]!
      for (let d = 0; d < v.length; d++) v[d]! += (r() - 0.5) * 0.08
      const norm = Math.hypot(...v)
      for (let d = 0; d < v.length; d++) v[d]! /= norm
      return v
    })
  }
  health() { return this.real.health() }
  async close() {}
}

/** Serves query vectors computed beforehand, so a run measures the search alone. */
class CachedQueryEmbedder implements Embedder {
  readonly model = 'cached'
  readonly dimensions: number
  constructor(private readonly cache: Map<string, Float32Array>, dims: number) {
    this.dimensions = dims
  }
  async embedQueries(texts: readonly string[]) {
    return texts.map((t) => {
      const v = this.cache.get(t)
      if (!v) throw new Error(`no cached vector for ${t}`)
      return v
    })
  }
  async embedPassages(): Promise<Float32Array[]> { throw new Error('not used') }
  async health() { return { backend: 'cached', ok: true, latency_ms: 0 } }
  async close() {}
}

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN
const round = (x: number): number => Number(x.toFixed(2))
function summary(times: number[]) {
  const s = [...times].sort((a, b) => a - b)
  return { n: s.length, p50_ms: round(pct(s, 50)), p90_ms: round(pct(s, 90)), p99_ms: round(pct(s, 99)), mean_ms: round(s.reduce((a, b) => a + b, 0) / s.length) }
}

/** Times every `project` and `describe` call of a graph store: where a graph arm's time goes. */
function timedGraph(graph: EpisodicGraphStore, calls: { project: number[]; describe: number[] }): EpisodicGraphStore {
  return new Proxy(graph, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown
      if ((key !== 'project' && key !== 'describe') || typeof value !== 'function') return value
      return async (...a: unknown[]) => {
        const t = performance.now()
        try { return await (value as (...x: unknown[]) => Promise<unknown>).apply(target, a) } finally { calls[key].push(performance.now() - t) }
      }
    }
  })
}

interface Arm {
  name: string
  /** The store calls of the search pass. */
  calls: { project: number[]; describe: number[] }
  /** Searches with precomputed query vectors: the search alone. */
  search: ReturnType<typeof createEpisodicAdapter>
  /** The whole retrieve, the query embedding included. */
  full: ReturnType<typeof createEpisodicAdapter>
}

/**
 * Measures the arms side by side: every pass alternates them query by query (and which one goes first),
 * so the shared machine's load drifts over both alike.
 */
async function measure(arms: readonly Arm[], embedder: Embedder, vectorQueries: Map<string, string>) {
  for (const arm of arms) for (const q of QUERIES) { await arm.full.retrieve({ query: q, top_k: 10 }); await arm.search.retrieve({ query: q, top_k: 10 }) }
  const embedT: number[] = []
  const per = arms.map(() => ({ search: [] as number[], cpu: [] as number[], full: [] as number[], vector: [] as number[], graph: [] as number[], items: 0 }))
  const order = (i: number) => (i % 2 === 0 ? arms.map((_, k) => k) : arms.map((_, k) => arms.length - 1 - k))
  // Separate passes, so that ONNX Runtime's worker threads (which spin for a moment after a run) do not
  // bill the search pass for their CPU time.
  for (let i = 0; i < QUERY_RUNS; i++) {
    const t = performance.now()
    await embedder.embedQueries([vectorQueries.get(QUERIES[i % QUERIES.length]!)!])
    embedT.push(performance.now() - t)
  }
  await new Promise((r) => setTimeout(r, 200))
  for (let i = 0; i < QUERY_RUNS; i++) {
    for (const k of order(i)) {
      const t = performance.now()
      // CPU time of this process for the search: a figure the shared machine's load does not inflate.
      const cpu = process.cpuUsage()
      const r = await arms[k]!.search.retrieve({ query: QUERIES[i % QUERIES.length]!, top_k: 10 })
      per[k]!.search.push(performance.now() - t)
      const used = process.cpuUsage(cpu)
      per[k]!.cpu.push((used.user + used.system) / 1000)
      for (const l of r.legs) if (l.name === 'vector' || l.name === 'graph') per[k]![l.name].push(l.took_ms)
      per[k]!.items += r.items.length
    }
  }
  for (let i = 0; i < QUERY_RUNS; i++) {
    for (const k of order(i)) {
      const t = performance.now()
      await arms[k]!.full.retrieve({ query: QUERIES[i % QUERIES.length]!, top_k: 10 })
      per[k]!.full.push(performance.now() - t)
    }
  }
  const out = Object.fromEntries(arms.map((arm, k) => {
    const m = per[k]!
    return [arm.name, {
      query_embedding: summary(embedT),
      search_after_embedding: summary(m.search),
      search_after_embedding_cpu: summary(m.cpu),
      retrieve_including_embedding: summary(m.full),
      legs_after_embedding: { vector: summary(m.vector), graph_and_scoring: summary(m.graph) },
      graph_store_calls: { project: summary(arm.calls.project.slice(-QUERY_RUNS)), describe: summary(arm.calls.describe.slice(-QUERY_RUNS)) },
      mean_items: round(m.items / QUERY_RUNS)
    }]
  }))
  for (const [name, figures] of Object.entries(out)) console.log(name, JSON.stringify(figures))
  return out
}

/** The arms are this tree and the base on the embedded stores, each with its own modules; ratios this ÷ base. */
async function sideBySide(baseDir: string): Promise<void> {
  const started = Date.now()
  const trees: Tree[] = [loadTree('base', baseDir), loadTree('this', '.')]
  const load: number[][] = [loadavg()]
  const real = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: 'bge-small-zh-v1.5' })
  const phraseVectors = await real.embedPassages(PHRASES)
  const vectorQueries = new Map(QUERIES.map((q) => [q, preprocessQuery(q, DEFAULT_EPISODIC_CONFIG, Date.now()).vector_query]))
  const cache = new Map<string, Float32Array>()
  for (const vq of vectorQueries.values()) cache.set(vq, (await real.embedQueries([vq]))[0]!)
  const cached = new CachedQueryEmbedder(cache, real.dimensions)
  const work = await mkdtemp(join(tmpdir(), 'episodic-bench-'))
  const timeouts = { embedding: 60_000, vector: 60_000, graph: 60_000 }
  const results: Record<string, unknown> = {}
  const opened: Array<{ close(): Promise<void> }> = []
  try {
    for (const size of SIZES) {
      const body = syntheticBody(size)
      const arms: Arm[] = []
      const ingest: Record<string, number> = {}
      for (const tree of trees) {
        const { createEpisodicAdapter: adapterOf } = await tree.module('adapters/episodic/index.ts')
        // the same vectors for both trees: a fresh composer replays the same noise
        const composed = new ComposedEmbedder(new Map(PHRASES.map((p, i) => [p, phraseVectors[i]!])), real)
        // each tree's own services on the embedded stores, written through its write path
        const config = await tree.loadConfig(benchEnv(join(work, `${tree.name}-${size}`), { COLLECTION_PREFIX: 'bench_' }))
        const services = await tree.openServices(config, (base: object) => ({ ...base, embedder: borrowed(composed) }))
        opened.push(services)
        const { vectors, episodes: graph } = services as { vectors: unknown; episodes: EpisodicGraphStore }
        const t = performance.now()
        for (let i = 0; i < body.episodes.length; i += 500) {
          await tree.write(services, NS, { kind: 'episodes', op: 'upsert', body: { entities: i === 0 ? body.entities : [], episodes: body.episodes.slice(i, i + 500) } })
        }
        ingest[tree.name] = (performance.now() - t) / 1000
        const calls = { project: [] as number[], describe: [] as number[] }
        arms.push({
          name: tree.name, calls,
          search: adapterOf({ graph: timedGraph(graph, calls), vectors, embedder: cached }, { collectionPrefix: 'bench_', timeouts }),
          full: adapterOf({ graph, vectors, embedder: real }, { collectionPrefix: 'bench_', timeouts })
        })
        console.log(`${tree.name} (${tree.commit}): ${size} Episodes ingested in ${round(ingest[tree.name]!)} s`)
      }
      load.push(loadavg())
      const m = await measure(arms, real, vectorQueries)
      load.push(loadavg())
      const [b, t] = [m['base']!, m['this']!]
      results[`embedded_${size}`] = {
        episodes: size, base: { ingest_seconds: round(ingest['base']!), ...b }, this: { ingest_seconds: round(ingest['this']!), ...t },
        ratio_this_over_base: {
          search_after_embedding_p50: round(t.search_after_embedding.p50_ms / b.search_after_embedding.p50_ms),
          search_after_embedding_cpu_p50: round(t.search_after_embedding_cpu.p50_ms / b.search_after_embedding_cpu.p50_ms),
          retrieve_including_embedding_p50: round(t.retrieve_including_embedding.p50_ms / b.retrieve_including_embedding.p50_ms),
          retrieve_including_embedding_p99: round(t.retrieve_including_embedding.p99_ms / b.retrieve_including_embedding.p99_ms),
          ingest_seconds: round(ingest['this']! / ingest['base']!)
        }
      }
      console.log(`this/base at ${size}:`, JSON.stringify((results[`embedded_${size}`] as { ratio_this_over_base: unknown }).ratio_this_over_base))
    }
  } finally {
    for (const services of opened) await services.close()
    await real.close()
    await rm(work, { recursive: true, force: true })
  }
  const output = {
    generated_by: 'bench/episodic.ts --base',
    date: new Date().toISOString(),
    trees: Object.fromEntries(trees.map((t) => [t.name, t.commit])),
    machine: { cpus: cpus().length, node: process.version },
    load_average_1_5_15: load.map((l) => l.map(round)),
    note: 'Shared machine: compare the ratios, not the absolute figures. Both trees on the embedded stores, each with its own ' +
      'ingest, vector store, graph store and adapter loaded from its sources into this process, over the same Episodes; each ' +
      'pass alternates the two trees query by query. One client, top_k 10.',
    query_runs: QUERY_RUNS,
    results,
    took_s: round((Date.now() - started) / 1000)
  }
  await mkdir(join(ROOT, 'bench', 'results'), { recursive: true })
  await writeFile(resolve(ROOT, 'bench', 'results', args.out ?? 'episodic-vs-base.json'), `${JSON.stringify(output, null, 2)}\n`)
}

async function main(): Promise<void> {
  if (args.base) return sideBySide(args.base)
  const started = Date.now()
  const load: number[][] = [loadavg()]
  const threads = args.threads ? Number(args.threads) : undefined
  const real = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: 'bge-small-zh-v1.5', ...(threads ? { threads } : {}) })
  const phraseVectors = await real.embedPassages(PHRASES)
  const composed = new ComposedEmbedder(new Map(PHRASES.map((p, i) => [p, phraseVectors[i]!])), real)
  // The adapter embeds the preprocessed vector query; cache exactly that text.
  const vectorQueries = new Map(QUERIES.map((q) => [q, preprocessQuery(q, DEFAULT_EPISODIC_CONFIG, Date.now()).vector_query]))
  const cache = new Map<string, Float32Array>()
  for (const vq of vectorQueries.values()) cache.set(vq, (await real.embedQueries([vq]))[0]!)
  const cached = new CachedQueryEmbedder(cache, real.dimensions)

  const results: Record<string, unknown> = {}
  const work = await mkdtemp(join(tmpdir(), 'episodic-bench-'))
  const server = args.neo4j === 'true' ? await startNeo4j({ heap: '2g' }) : null
  const conn = server ? createNeo4jConnection({ uri: server.uri, timeoutMs: 120_000 }) : null
  const timeouts = { embedding: 60_000, vector: 60_000, graph: 60_000 }
  try {
    for (const size of SIZES) {
      const body = syntheticBody(size)
      // One vector store for both graphs: the arms differ by the graph store alone. The embedded arm is written through
      // the write path; the Neo4j arm's graph is written to its store (the vectors are already in the shared store).
      const bench = await openBenchServices(composed, { COLLECTION_PREFIX: 'bench_', EPISODIC_THREAD: 'false' })
      const { vectors, episodes: embedded } = bench.services
      const batch = 500
      let t = performance.now()
      for (let i = 0; i < body.episodes.length; i += batch) {
        await bench.services.writePath.write(NS, { kind: 'episodes', op: 'upsert', body: { entities: i === 0 ? body.entities : [], episodes: body.episodes.slice(i, i + batch) } })
      }
      const ingestS = (performance.now() - t) / 1000
      const graphs: Array<[string, EpisodicGraphStore]> = [['embedded', embedded]]
      let neo4jWriteS: number | undefined
      if (conn) {
        const neo4j = new Neo4jEpisodicGraphStore({ connection: conn })
        await neo4j.dropNamespace(NS)
        const entities = new Map((body.entities ?? []).map((e) => [e.id, { id: e.id, type: 'Entity', name: e.name, description: e.description }] as const))
        t = performance.now()
        for (let i = 0; i < body.episodes.length; i += batch) {
          const change = buildEpisodeGraphs({ entities: i === 0 ? body.entities : [], episodes: body.episodes.slice(i, i + batch) }, entities)
          await neo4j.apply(NS, change)
        }
        neo4jWriteS = (performance.now() - t) / 1000
        graphs.push(['neo4j', neo4j])
      }
      let threaded: ThreadedEpisodicGraphStore | undefined
      if (args.thread === 'true') {
        threaded = new ThreadedEpisodicGraphStore()
        const entities = new Map((body.entities ?? []).map((e) => [e.id, { id: e.id, type: 'Entity', name: e.name, description: e.description }] as const))
        for (let i = 0; i < body.episodes.length; i += batch) {
          await threaded.apply(NS, buildEpisodeGraphs({ entities: i === 0 ? body.entities : [], episodes: body.episodes.slice(i, i + batch) }, entities))
        }
        graphs.push(['embedded-thread', threaded])
      }
      const counts = await embedded.countByType(NS)
      for (const [name, graph] of graphs.slice(1)) {
        const other = await graph.countByType(NS)
        if (JSON.stringify(other) !== JSON.stringify(counts)) throw new Error(`${name} holds ${JSON.stringify(other)}, embedded ${JSON.stringify(counts)}`)
      }
      load.push(loadavg())
      const arms = graphs.map(([name, graph]): Arm => {
        const calls = { project: [] as number[], describe: [] as number[] }
        return {
          name,
          calls,
          search: createEpisodicAdapter({ graph: timedGraph(graph, calls), vectors, embedder: cached }, { collectionPrefix: 'bench_', timeouts }),
          full: createEpisodicAdapter({ graph, vectors, embedder: real }, { collectionPrefix: 'bench_', timeouts })
        }
      })
      const m = await measure(arms, real, vectorQueries)
      load.push(loadavg())
      results[`embedded_${size}`] = { graph: 'embedded', vectors: 'embedded', episodes: size, nodes: counts,
        ingest: { seconds: round(ingestS), episodes_per_s: round(size / ingestS), note: 'composed vectors (no model call per text)' }, ...m['embedded'] }
      if (m['neo4j']) {
        const n = m['neo4j']
        const e = m['embedded']!
        results[`neo4j_${size}`] = { graph: 'neo4j', vectors: 'embedded (the same store)', episodes: size, nodes: counts,
          graph_write: { seconds: round(neo4jWriteS!), episodes_per_s: round(size / neo4jWriteS!) }, ...n }
        results[`neo4j_to_embedded_${size}`] = {
          search_after_embedding_p50: round(n.search_after_embedding.p50_ms / e.search_after_embedding.p50_ms),
          retrieve_including_embedding_p50: round(n.retrieve_including_embedding.p50_ms / e.retrieve_including_embedding.p50_ms)
        }
        console.log(`neo4j/embedded at ${size}:`, JSON.stringify(results[`neo4j_to_embedded_${size}`]))
      }
      if (m['embedded-thread']) {
        const th = m['embedded-thread']
        const e = m['embedded']!
        results[`embedded_thread_${size}`] = { graph: 'embedded, in a thread of its own', vectors: 'embedded (the same store)', episodes: size, nodes: counts, ...th }
        results[`thread_to_embedded_${size}`] = {
          search_after_embedding_p50: round(th.search_after_embedding.p50_ms / e.search_after_embedding.p50_ms),
          search_after_embedding_p99: round(th.search_after_embedding.p99_ms / e.search_after_embedding.p99_ms),
          retrieve_including_embedding_p50: round(th.retrieve_including_embedding.p50_ms / e.retrieve_including_embedding.p50_ms)
        }
        console.log(`thread/embedded at ${size}:`, JSON.stringify(results[`thread_to_embedded_${size}`]))
      }
      await bench.close()
      await threaded?.close()
      for (const [, graph] of graphs) if (graph instanceof Neo4jEpisodicGraphStore) await graph.dropNamespace(NS)
    }
  } finally {
    await conn?.close()
    await server?.stop()
    await real.close()
    await rm(work, { recursive: true, force: true })
  }
  const output = {
    generated_by: 'bench/episodic.ts',
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model, memory_gb: round(totalmem() / 2 ** 30), node: process.version },
    load_average_1_5_15: load.map((l) => l.map(round)),
    note: 'What else ran: see the load averages (this bench alone keeps about two threads busy). One client, top_k 10, ' +
      'wide_search_top_k 100 (200 for time queries), summary display, normalisation query. Neo4j 5.26 Community from Maven, ' +
      'embedded, Bolt on localhost (when run). Every graph holds the same Episodes and all share one embedded vector store; ' +
      'each pass alternates the graphs query by query.',
    query_runs: QUERY_RUNS,
    embedder_threads: threads ?? 'onnxruntime default (one per core)',
    queries: QUERIES,
    targets: ['p50 at 1k Episodes <= 30 ms on the embedded stores including the query embedding',
      'Neo4j p50 within 2x of the embedded graph at 1k and 10k Episodes'],
    results,
    took_s: round((Date.now() - started) / 1000)
  }
  await mkdir(join(ROOT, 'bench', 'results'), { recursive: true })
  await writeFile(resolve(ROOT, 'bench', 'results', args.out ?? 'episodic.json'), `${JSON.stringify(output, null, 2)}\n`)
  console.log(JSON.stringify(output.results, null, 1))
}

await main()
