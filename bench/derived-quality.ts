/**
 * What derived Episodes cost and what the derived modes answer (issue #31, items 1 and 7). Three parts, each chosen by
 * a flag, each printing JSON and writing bench/results/derived-quality-<part>.json:
 *
 *   npx tsx bench/derived-quality.ts --variants            the demo documents (41, 221 chunks) written once per setting
 *       (derivation off, the graph only, and the graph with Episodes under each vector source of VARIANTS), timed, then
 *       hybrid, graphrag and episodic on bench/judged/demo-corpus.jsonl over each (an item counts for its chunks in
 *       item then evidence order; found at k when one of the first k distinct chunks holds an answer)
 *   npx tsx bench/derived-quality.ts --cost 3              the same write timed alone, 3 rounds of each setting in rotated
 *       order (derivation off, the graph only, Episodes with the vector sources that answered best)
 *   npx tsx bench/derived-quality.ts --evaluate es6|cmrc [--questions N] [--public DIR]
 *       the corpus written with the defaults (derived graph and Episodes), then POST /evaluate with the three modes
 *       (per-document Recall@k, MRR@10: an item counts for its documents, a derived item for those of its evidence
 *       chunks), and the share of questions each mode answers with a non-empty bundle whose every item cites chunks of
 *       the namespace (GET /retrieve). es6: ruanyf/es6tutorial's docs/ (`--public`, default /work/es6/docs) judged by
 *       bench/judged/es6tutorial.jsonl; cmrc: the CMRC 2018 trial set (bench/lib/cmrc.ts), the first N questions
 *       (derived-quality-cmrc-<N>.json).
 *   npx tsx bench/derived-quality.ts --throughput 10000|demo [--embedder stand-in]    synthetic one-chunk CMRC documents
 *       (bench/lib/synthetic.ts) in batches of 100 documents, or the demo documents in batches of 4, written to two services
 *       side by side, derivation off and on (the defaults), batch by batch in turn (each batch first to one, then the
 *       other, alternating), so that a busy machine's drift falls on both. Every 10 batches a segment: derivation's own
 *       time per chunk (on minus off, batch by batch), the time the "on" side spent in the stores only derivation writes
 *       (the knowledge graph, the episodic graph, the derived Episodes' vector collections), the derived graph's size and
 *       the heap. With `--embedder stand-in` no model runs (stand-in vectors, bench/lib/synthetic.ts): embedding costs
 *       nothing, so derivation's share is exaggerated and on / off is a lower bound on the real model's
 *       (`-standin` in the result file's name).
 *
 * CMRC's trial set has 1,002 questions, two of them blank (the service answers a blank query with 400): `--evaluate cmrc`
 * leaves the blank ones out and says how many.
 *
 *   --throughput cmrc (with --links or --rounds) the CMRC 2018 trial paragraphs themselves (256 documents), 4 a batch
 *   --links F,E     (with --throughput) the derivation side links F entities per Facet and E per Episode
 *                   (DERIVED_EPISODE_ENTITY_LINKS) instead of the default, `F,E,M` only entities its document mentions
 *                   M times or more (DERIVED_EPISODE_ENTITY_MIN_MENTIONS; without M the default, 2: `F,E,1` links any,
 *                   as `F,E` did before that setting); several settings separated by `/`. With --evaluate: one setting
 *                   (`0,0/4,8`) give one derivation side each, every batch written to every side in rotating order
 *   --rounds N      (with --throughput) the corpus written N times, each time into fresh namespaces; per-round ratios
 *   --only A,B      (with --variants) only these settings (names as in the report: off, episodes_chunk, ...)
 *   --tag NAME      the result goes to bench/results/derived-quality-<part>-NAME.json, so earlier results stay
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { loadConfig } from '../src/config.js'
import { demoDir } from '../src/corpus/demo.js'
import { checkedDocuments } from '../src/corpus/documents-body.js'
import type { DocumentInput } from '../src/corpus/documents/input.js'
import { readDocuments } from '../src/corpus/files.js'
import { DERIVED_COLLECTION_PREFIX } from '../src/providers/episodic-graph/collections.js'
import { DEFAULT_EPISODE_OPTIONS, type EpisodeDerivationOptions } from '../src/derive/episodes.js'
import { parseJudgedSet, type JudgedQuestion } from '../src/evaluation/judged-set.js'
import { buildApp } from '../src/http/app.js'
import { openServices, type Providers, type Services } from '../src/services.js'
import { createRuntime } from '../src/runtime.js'
import { loadCmrc } from './lib/cmrc.js'
import { standInEmbedder, syntheticDocuments } from './lib/synthetic.js'

const { values } = parseArgs({
  options: {
    variants: { type: 'boolean', default: false },
    cost: { type: 'string' },
    evaluate: { type: 'string' },
    questions: { type: 'string', default: '300' },
    public: { type: 'string', default: '/work/es6/docs' },
    throughput: { type: 'string' },
    embedder: { type: 'string', default: 'real' },
    links: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    only: { type: 'string' },
    tag: { type: 'string' }
  }
})
if (values.embedder !== 'real' && values.embedder !== 'stand-in') throw new Error(`--embedder real|stand-in, not ${values.embedder}`)
if (values.embedder === 'stand-in' && !values.throughput) throw new Error('--embedder stand-in is for --throughput only (quality needs the model)')
const standInVectors = values.embedder === 'stand-in'

const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits
const load = () => round(loadavg()[0]!, 1)
const MODES = ['hybrid', 'graphrag', 'episodic'] as const
/** Legs' deadlines on a busy machine (the service's defaults are 2 s). */
const SLOW = { EMBEDDING_TIMEOUT_MS: '60000', VECTOR_TIMEOUT_MS: '60000', LEXICAL_TIMEOUT_MS: '60000', GRAPH_TIMEOUT_MS: '60000', MAX_EMBEDDING_WAIT_MS: '0' }

/** The vector sources and link counts compared: the defaults before issue #31's cut, the steps of the cut, the cut's defaults. */
const VARIANTS: Record<string, Partial<EpisodeDerivationOptions>> = {
  all_text: { vectors: { labels: 'text', points: 'text', summaries: 'text' }, entitiesPerFacet: 4, entitiesPerEpisode: 8, entityMinMentions: 1 },
  points_chunk: { vectors: { labels: 'text', points: 'chunk', summaries: 'text' }, entitiesPerFacet: 4, entitiesPerEpisode: 8, entityMinMentions: 1 },
  chunk: { vectors: { labels: 'chunk', points: 'chunk', summaries: 'chunks' }, entitiesPerFacet: 4, entitiesPerEpisode: 8, entityMinMentions: 1 },
  chunk_entities_2_4: { vectors: { labels: 'chunk', points: 'chunk', summaries: 'chunks' }, entitiesPerFacet: 2, entitiesPerEpisode: 4, entityMinMentions: 1 },
  chunk_entities_1_2: { vectors: { labels: 'chunk', points: 'chunk', summaries: 'chunks' }, entitiesPerFacet: 1, entitiesPerEpisode: 2, entityMinMentions: 1 },
  chunk_entities_4_8_min_2: { vectors: { labels: 'chunk', points: 'chunk', summaries: 'chunks' }, entitiesPerFacet: 4, entitiesPerEpisode: 8, entityMinMentions: 2 },
  chunk_entities_2_4_min_2: { vectors: { labels: 'chunk', points: 'chunk', summaries: 'chunks' }, entitiesPerFacet: 2, entitiesPerEpisode: 4, entityMinMentions: 2 },
  chunk_entities_4_8_min_3: { vectors: { labels: 'chunk', points: 'chunk', summaries: 'chunks' }, entitiesPerFacet: 4, entitiesPerEpisode: 8, entityMinMentions: 3 },
  chunk_no_entities: { vectors: { labels: 'chunk', points: 'chunk', summaries: 'chunks' }, entitiesPerFacet: 0, entitiesPerEpisode: 0 }
}

type App = Awaited<ReturnType<typeof buildApp>>

/**
 * A service on fresh embedded stores with its HTTP app (closing the app closes the services). `providers` wraps the
 * configured providers (the stand-in embedder, the timed stores).
 */
async function opened(
  env: Record<string, string>, episodeOptions?: Partial<EpisodeDerivationOptions>, providers?: (base: Providers) => Providers
): Promise<{ services: Services; app: App; dir: string; close(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'recall-derived-quality-'))
  const config = loadConfig({
    DATA_DIR: dir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', MODEL_DIR: process.env.MODEL_DIR ?? './models', EMBEDDING_SESSIONS: '0',
    // the bench is the only client: 3,000 retrieves of 1,000 questions outrun the default 1,200 a minute on a quiet machine
    RATE_LIMIT_MAX: '0', ...SLOW, ...env
  })
  const services = await openServices(config, { ...(episodeOptions ? { episodeOptions } : {}), ...(providers ? { providers } : {}) })
  const app = await buildApp(createRuntime(services), { logger: false })
  await app.ready()
  await services.embedder.embedPassages(['预热一次模型'])
  return {
    services, app, dir,
    async close() {
      await app.close()
      await rm(dir, { recursive: true, force: true })
    }
  }
}

interface ChunkFigures {
  non_empty: number; grounded: number; recall_at_1: number; recall_at_5: number; recall_at_10: number; mrr_at_10: number
  /** Each question's rank of its first answering chunk (0: none in the first 10), in judged-set order: for paired comparisons. */
  ranks: number[]
}

/** The demo set's metric: each mode's items as their chunks (a hybrid item is its chunk), found when a chunk holds an answer. */
async function chunkFigures(services: Services, app: App, namespace: string, questions: readonly JudgedQuestion[]): Promise<Record<string, ChunkFigures>> {
  const library = services.documents.get(namespace)!
  const out: Record<string, ChunkFigures> = {}
  for (const mode of MODES) {
    let nonEmpty = 0
    let grounded = 0
    let mrr = 0
    const found: Record<number, number> = { 1: 0, 5: 0, 10: 0 }
    const ranks: number[] = []
    for (const q of questions) {
      const items = await retrieved(app, namespace, mode, q.query)
      const chunks = [...new Set(items.flatMap((i) => chunksOf(mode, i)))]
      if (items.length > 0) nonEmpty++
      if (items.length > 0 && items.every((i) => isGrounded(mode, i, library))) grounded++
      const answers = q.relevant.answers ?? []
      const rank = chunks.findIndex((id) => answers.some((a) => library.chunk(id)?.text.includes(a))) + 1
      for (const k of [1, 5, 10]) if (rank > 0 && rank <= k) found[k]!++
      if (rank > 0 && rank <= 10) mrr += 1 / rank
      ranks.push(rank > 0 && rank <= 10 ? rank : 0)
    }
    const n = questions.length
    out[mode] = {
      non_empty: round(nonEmpty / n), grounded: round(grounded / n),
      recall_at_1: round(found[1]! / n), recall_at_5: round(found[5]! / n), recall_at_10: round(found[10]! / n), mrr_at_10: round(mrr / n), ranks
    }
  }
  return out
}

interface Item { id: string; metadata: { evidence?: Array<{ chunk_id: string }>; source_chunk_ids?: string[] } }

async function retrieved(app: App, namespace: string, mode: string, query: string): Promise<Item[]> {
  const response = await app.inject({ method: 'POST', url: '/retrieve', payload: { mode, query, top_k: 10, namespace } })
  if (response.statusCode !== 200) throw new Error(`${mode} ${response.statusCode}: ${response.body}`)
  return (response.json() as { recall_bundle: Item[] }).recall_bundle
}

const chunksOf = (mode: string, item: Item): string[] =>
  mode === 'hybrid' ? [item.id] : (item.metadata.evidence ?? []).map((e) => e.chunk_id)

/** An item cites at least one chunk, and every chunk it cites is one of the namespace's. */
function isGrounded(mode: string, item: Item, library: { chunk(id: string): unknown }): boolean {
  const cited = mode === 'hybrid' ? [item.id] : [...chunksOf(mode, item), ...(item.metadata.source_chunk_ids ?? [])]
  return cited.length > 0 && cited.every((id) => library.chunk(id) !== undefined)
}

async function variants(): Promise<Record<string, unknown>> {
  const NS = 'demo-docs'
  const documents = checkedDocuments({ documents: await readDocuments([`${demoDir()}documents`]), namespace: NS })
  const questions = parseJudgedSet(await readFile('bench/judged/demo-corpus.jsonl', 'utf8'))
  const settings: Array<{ name: string; env: Record<string, string>; options?: Partial<EpisodeDerivationOptions> }> = [
    { name: 'off', env: { DERIVED_GRAPH: 'false', DERIVED_EPISODES: 'false' } },
    { name: 'graph_only', env: { DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'false' } },
    ...Object.entries(VARIANTS).map(([name, options]) => ({ name: `episodes_${name}`, env: { DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'true' }, options })),
    // the same as the first, last: the drift of a busy machine over the run
    { name: 'off_again', env: { DERIVED_GRAPH: 'false', DERIVED_EPISODES: 'false' } }
  ].filter((s) => values.only === undefined || values.only.split(',').includes(s.name))
  const report: Record<string, unknown> = { documents: documents.length, questions: questions.length, load_average_at_start: loadavg().map((x) => round(x, 1)), settings: {} }
  for (const s of settings) {
    const { services, app, close } = await opened(s.env, s.options)
    try {
      const loadBefore = load()
      const started = performance.now()
      const written = await services.writePath.write(NS, { kind: 'documents', op: 'upsert', documents })
      const ms = performance.now() - started
      const figures = s.name.startsWith('off') ? {} : await chunkFigures(services, app, NS, questions)
      ;(report['settings'] as Record<string, unknown>)[s.name] = {
        ...(s.options ? { options: s.options } : {}),
        ingest_ms: Math.round(ms), chunks: written.chunks, chunks_per_s: round(written.chunks / (ms / 1000), 1), derived: written.derived,
        load_before: loadBefore, load_after: load(), ...figures
      }
      console.error(s.name, Math.round(ms), 'ms', JSON.stringify(written.derived), JSON.stringify((figures as Record<string, ChunkFigures>)['episodic'] ?? {}))
    } finally {
      await close()
    }
  }
  report['load_average_at_end'] = loadavg().map((x) => round(x, 1))
  return report
}

/**
 * The write of the demo documents alone, timed, `rounds` times per setting: derivation off, the graph only, and the graph
 * with Episodes under the vector sources that answered best (`chunk`, `chunk_no_entities`); each round runs the settings
 * in another order (rotated by one), so that a busy machine's drift does not fall on one setting.
 */
async function cost(rounds: number): Promise<Record<string, unknown>> {
  const NS = 'demo-docs'
  const documents = checkedDocuments({ documents: await readDocuments([`${demoDir()}documents`]), namespace: NS })
  const settings: Array<{ name: string; env: Record<string, string>; options?: Partial<EpisodeDerivationOptions> }> = [
    { name: 'off', env: { DERIVED_GRAPH: 'false', DERIVED_EPISODES: 'false' } },
    { name: 'graph_only', env: { DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'false' } },
    { name: 'episodes_chunk', env: { DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'true' }, options: VARIANTS['chunk']! },
    { name: 'episodes_chunk_entities_2_4', env: { DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'true' }, options: VARIANTS['chunk_entities_2_4']! },
    { name: 'episodes_chunk_no_entities', env: { DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'true' }, options: VARIANTS['chunk_no_entities']! }
  ]
  const runs: Record<string, Array<{ ms: number; load: number; texts_embedded?: number }>> = {}
  const startedAt = loadavg().map((x) => round(x, 1))
  for (let r = 0; r < rounds; r++) {
    const order = [...settings.slice(r % settings.length), ...settings.slice(0, r % settings.length)]
    for (const s of order) {
      const { services, close } = await opened(s.env, s.options)
      try {
        const t0 = performance.now()
        const written = await services.writePath.write(NS, { kind: 'documents', op: 'upsert', documents })
        const ms = Math.round(performance.now() - t0)
        const texts = (written.derived as unknown as Record<string, number> | undefined)?.['episode_texts_embedded']
        ;(runs[s.name] ??= []).push({ ms, load: load(), ...(texts !== undefined ? { texts_embedded: texts } : {}) })
        console.error(r, s.name, ms, 'ms', 'load', load())
      } finally {
        await close()
      }
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const off = median(runs['off']!.map((x) => x.ms))
  return {
    documents: documents.length, rounds, load_average_at_start: startedAt, load_average_at_end: loadavg().map((x) => round(x, 1)),
    median_ms: Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, median(v.map((x) => x.ms))])),
    throughput_over_off: Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, round(off / median(v.map((x) => x.ms)))])),
    runs
  }
}

async function evaluate(which: string): Promise<Record<string, unknown>> {
  const NS = `derived-${which}`
  let documents: DocumentInput[]
  let questions: JudgedQuestion[]
  let blank = 0
  if (which === 'es6') {
    documents = await readDocuments([values.public!])
    questions = parseJudgedSet(await readFile('bench/judged/es6tutorial.jsonl', 'utf8'))
  } else if (which === 'cmrc') {
    const set = await loadCmrc()
    documents = set.documents
    const asked = set.queries.slice(0, Number(values.questions))
    blank = asked.filter((q) => q.query.trim() === '').length
    // ids keep the set's numbering, blank ones left out
    questions = asked.flatMap((q, i) => q.query.trim() === ''
      ? []
      : [{ id: `c${i + 1}`, line: i + 1, query: q.query, relevant: { doc_ids: q.relevant_ids }, match: 'all' as const }])
  } else throw new Error(`--evaluate es6|cmrc, not ${which}`)
  const { services, app, close } = await opened({ DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'true', EVAL_TIMEOUT_SECONDS: '7200', ...(values.links ? linkEnv(values.links) : {}) })
  const report: Record<string, unknown> = {
    corpus: which, ...(values.links ? { entity_links: values.links } : {}), documents: documents.length, questions: questions.length, ...(blank > 0 ? { blank_questions_left_out: blank } : {}),
    load_average_at_start: loadavg().map((x) => round(x, 1))
  }
  try {
    const started = performance.now()
    const written = await services.writePath.write(NS, { kind: 'documents', op: 'upsert', documents: checkedDocuments({ documents, namespace: NS }) })
    report['ingest'] = { ms: Math.round(performance.now() - started), chunks: written.chunks, derived: written.derived, load_after: load() }
    console.error('ingest', JSON.stringify(report['ingest']))
    {
      const library = services.documents.get(NS)!
      const answered: Record<string, { non_empty: number; grounded: number }> = {}
      for (const mode of MODES) {
        let nonEmpty = 0
        let grounded = 0
        for (const q of questions) {
          const items = await retrieved(app, NS, mode, q.query)
          if (items.length > 0) nonEmpty++
          if (items.length > 0 && items.every((i) => isGrounded(mode, i, library))) grounded++
        }
        answered[mode] = { non_empty: round(nonEmpty / questions.length), grounded: round(grounded / questions.length) }
      }
      report['answered'] = answered
      report['retrieve_phase'] = { seconds: round((performance.now() - started) / 1000 - (report['ingest'] as { ms: number }).ms / 1000, 1), load_after: load() }
      console.error('answered', JSON.stringify(answered), JSON.stringify(report['retrieve_phase']))
      const evaluateStarted = performance.now()
      const jsonl = questions.map((q) => JSON.stringify({ id: q.id, query: q.query, relevant: q.relevant })).join('\n')
      const body = { judged_set: jsonl, namespace: NS, arms: MODES.map((mode) => ({ mode })), ks: [1, 5, 10], async: true }
      const accepted = await app.inject({ method: 'POST', url: '/evaluate', payload: body })
      if (accepted.statusCode !== 202) throw new Error(`/evaluate ${accepted.statusCode}: ${accepted.body}`)
      const job = accepted.json() as { status_url: string }
      let done: { status: string; result?: { arms: Array<{ label: string; errors: number; metrics: Record<string, { mean: number; ci_low: number; ci_high: number }>; latency_ms: unknown }> }; error?: unknown }
      for (;;) {
        await new Promise((r) => setTimeout(r, 2000))
        done = (await app.inject({ method: 'GET', url: job.status_url })).json()
        if (done.status !== 'running' && done.status !== 'queued') break
      }
      if (!done.result) throw new Error(`/evaluate job ended ${done.status}: ${JSON.stringify(done.error)}`)
      report['evaluate_phase'] = { seconds: round((performance.now() - evaluateStarted) / 1000, 1), load_after: load() }
      report['evaluate'] = Object.fromEntries(done.result.arms.map((a) => [a.label, { errors: a.errors, ...a.metrics, latency_ms: a.latency_ms }]))
      const hybrid = done.result.arms[0]!.metrics['recall_at_5']!.mean
      report['recall_at_5_over_hybrid'] = Object.fromEntries(done.result.arms.map((a) => [a.label, round(a.metrics['recall_at_5']!.mean / hybrid)]))
    }
  } finally {
    await close()
  }
  report['load_average_at_end'] = loadavg().map((x) => round(x, 1))
  return report
}

/**
 * Time spent in a provider's calls, summed over wall time in which at least one selected call was running (calls that
 * overlap count once). A Proxy: the provider itself is unchanged, and its own inner calls are not seen.
 */
class Stopwatch {
  ms = 0
  #running = 0
  #since = 0

  wrap<T extends object>(target: T, selected: (method: string, args: unknown[]) => boolean = () => true): T {
    return new Proxy(target, {
      get: (t, key) => {
        const value: unknown = Reflect.get(t, key, t)
        if (typeof value !== 'function') return value
        return (...args: unknown[]) => {
          if (!selected(String(key), args)) return value.apply(t, args)
          this.#start()
          let result: unknown
          try {
            result = value.apply(t, args)
          } catch (error) {
            this.#stop()
            throw error
          }
          if (result instanceof Promise) return result.finally(() => this.#stop())
          this.#stop()
          return result
        }
      }
    })
  }

  #start() {
    if (this.#running++ === 0) this.#since = performance.now()
  }

  #stop() {
    if (--this.#running === 0) this.ms += performance.now() - this.#since
  }
}

interface Segment { documents: number; chunks: number; off_ms: number; on_ms: number; graph_ms: number; episodes_ms: number; vectors_ms: number; loads: number[] }

async function throughput(which: string): Promise<Record<string, unknown>> {
  // demo and cmrc: documents of several chunks, 4 a batch (cmrc: the CMRC 2018 trial paragraphs themselves, 256 documents)
  const demo = which === 'demo' || which === 'cmrc'
  const docs = which === 'demo'
    ? checkedDocuments({ documents: await readDocuments([`${demoDir()}documents`]), namespace: 'synthetic' })
    : which === 'cmrc'
      ? checkedDocuments({ documents: (await loadCmrc()).documents, namespace: 'synthetic' })
      : syntheticDocuments((await loadCmrc()).documents.map((d) => d.text), Number(which))
  const size = demo ? 4 : 100
  const embedder = (base: Providers): Providers => standInVectors ? { ...base, embedder: standInEmbedder } : base
  // on the "on" side, the stores only derivation writes to: the knowledge graph, the episodic graph, the derived Episodes' collections
  const watch = { graph: new Stopwatch(), episodes: new Stopwatch(), vectors: new Stopwatch() }
  const derivedCollection = (_method: string, args: unknown[]) => typeof args[0] === 'string' && args[0].includes(DERIVED_COLLECTION_PREFIX)
  const sides = {
    off: await opened({ DERIVED_GRAPH: 'false', DERIVED_EPISODES: 'false' }, undefined, embedder),
    on: await opened({ DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'true' }, undefined, (base) => ({
      ...embedder(base),
      graph: watch.graph.wrap(base.graph),
      episodes: watch.episodes.wrap(base.episodes),
      vectors: watch.vectors.wrap(base.vectors, derivedCollection)
    }))
  }
  const totals = { off: { ms: 0, chunks: 0 }, on: { ms: 0, chunks: 0, texts_embedded: 0, vectors_reused: 0, episodes: 0, entities: 0 } }
  const loads: number[] = []
  const rate = (t: { ms: number; chunks: number }) => round(t.chunks / (t.ms / 1000), 1)
  const startedAt = loadavg().map((x) => round(x, 1))
  const segments: Record<string, unknown>[] = []
  const fresh = (): Segment => ({ documents: 0, chunks: 0, off_ms: 0, on_ms: 0, graph_ms: 0, episodes_ms: 0, vectors_ms: 0, loads: [] })
  let segment = fresh()
  const stores = () => ({ graph: watch.graph.ms, episodes: watch.episodes.ms, vectors: watch.vectors.ms })
  const summarise = async (s: Segment, written: number) => {
    const perChunk = (ms: number) => round(ms / s.chunks, 2)
    const graph = await sides.on.services.graph.count('synthetic')
    return {
      documents_written: written, chunks: s.chunks,
      off_ms_per_chunk: perChunk(s.off_ms), on_ms_per_chunk: perChunk(s.on_ms),
      derivation_ms_per_chunk: perChunk(s.on_ms - s.off_ms),
      in_stores_ms_per_chunk: { knowledge_graph: perChunk(s.graph_ms), episodic_graph: perChunk(s.episodes_ms), derived_vectors: perChunk(s.vectors_ms) },
      on_over_off: round(s.off_ms / s.on_ms),
      derived_graph: graph,
      heap_mib: Math.round(process.memoryUsage().heapUsed / 2 ** 20),
      load_average_1m_mean: round(s.loads.reduce((a, b) => a + b, 0) / s.loads.length, 1)
    }
  }
  const label = standInVectors ? `${which}-standin` : which
  try {
    for (let i = 0, b = 0; i < docs.length; i += size, b++) {
      const batch = docs.slice(i, i + size)
      const order = b % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)
      for (const side of order) {
        const before = stores()
        const t0 = performance.now()
        const written = await sides[side].services.writePath.write('synthetic', { kind: 'documents', op: 'upsert', documents: batch })
        const ms = performance.now() - t0
        totals[side].ms += ms
        totals[side].chunks += written.chunks
        segment[`${side}_ms`] += ms
        if (side === 'on') {
          const after = stores()
          segment.graph_ms += after.graph - before.graph
          segment.episodes_ms += after.episodes - before.episodes
          segment.vectors_ms += after.vectors - before.vectors
          segment.chunks += written.chunks
          segment.documents += batch.length
        }
        if (side === 'on' && written.derived) {
          const d = written.derived as unknown as Record<string, number>
          totals.on.texts_embedded += d['episode_texts_embedded'] ?? 0
          totals.on.vectors_reused += d['episode_vectors_reused'] ?? 0
          totals.on.episodes += d['episodes'] ?? 0
          totals.on.entities += d['entities'] ?? 0
        }
      }
      loads.push(load())
      segment.loads.push(load())
      if (b % 10 === 9 || demo || i + size >= docs.length) {
        segments.push(await summarise(segment, i + batch.length))
        segment = fresh()
        console.error(`${i + batch.length} documents`, JSON.stringify(segments.at(-1)), 'load', load())
        // so far, for a run stopped before the end
        const so = { documents_written: i + batch.length, off_chunks_per_s: rate(totals.off), on_chunks_per_s: rate(totals.on), on_over_off: round(rate(totals.on) / rate(totals.off)), load_average_1m: load(), totals, segments }
        await writeFile(`bench/results/derived-quality-throughput-${label}.partial.json`, `${JSON.stringify(so, null, 2)}\n`)
      }
    }
    return {
      embedder: standInVectors ? 'stand-in (no model: on / off is a lower bound on the real one)' : 'the real model',
      documents: docs.length, batch_documents: size, load_average_at_start: startedAt, load_average_at_end: loadavg().map((x) => round(x, 1)),
      load_average_1m_mean: round(loads.reduce((a, b) => a + b, 0) / loads.length, 1),
      off: { seconds: round(totals.off.ms / 1000, 1), chunks: totals.off.chunks, chunks_per_s: rate(totals.off) },
      on: {
        seconds: round(totals.on.ms / 1000, 1), chunks: totals.on.chunks, chunks_per_s: rate(totals.on), episodes: totals.on.episodes,
        entities: totals.on.entities, episode_texts_embedded: totals.on.texts_embedded, episode_vectors_reused: totals.on.vectors_reused
      },
      on_over_off: round(rate(totals.on) / rate(totals.off)),
      in_stores_seconds: { knowledge_graph: round(watch.graph.ms / 1000, 1), episodic_graph: round(watch.episodes.ms / 1000, 1), derived_vectors: round(watch.vectors.ms / 1000, 1) },
      derived_entities: await partsPerEntity(sides.on.services),
      data_dir_mib: { off: await mibOf(sides.off.dir), on: await mibOf(sides.on.dir) },
      segments
    }
  } finally {
    await sides.off.close()
    await sides.on.close()
  }
}

/** A `--links` setting as the service's environment: `F,E` (DERIVED_EPISODE_ENTITY_LINKS), `F,E,M` with M DERIVED_EPISODE_ENTITY_MIN_MENTIONS. */
function linkEnv(setting: string): Record<string, string> {
  if (setting === 'default') return {}
  const [f, e, m] = setting.split(',')
  return { DERIVED_EPISODE_ENTITY_LINKS: `${f},${e}`, ...(m !== undefined ? { DERIVED_EPISODE_ENTITY_MIN_MENTIONS: m } : {}) }
}

/** `--throughput` with `--links` or `--rounds`: one derivation side per link setting, the corpus written `--rounds` times. */
async function throughputByLinks(which: string): Promise<Record<string, unknown>> {
  // demo and cmrc: documents of several chunks, 4 a batch (cmrc: the CMRC 2018 trial paragraphs themselves, 256 documents)
  const demo = which === 'demo' || which === 'cmrc'
  const docs = which === 'demo'
    ? checkedDocuments({ documents: await readDocuments([`${demoDir()}documents`]), namespace: 'synthetic' })
    : which === 'cmrc'
      ? checkedDocuments({ documents: (await loadCmrc()).documents, namespace: 'synthetic' })
      : syntheticDocuments((await loadCmrc()).documents.map((d) => d.text), Number(which))
  const size = demo ? 4 : 100
  const rounds = Math.max(1, Number(values.rounds))
  // derivation off, and on with each link setting asked for (else the defaults): one service each
  const settings = values.links ? values.links.split('/') : ['default']
  const names = ['off', ...settings.map((l) => (settings.length === 1 ? 'on' : `on_${l.replaceAll(',', '_')}`))]
  const sides = new Map<string, Awaited<ReturnType<typeof opened>>>()
  sides.set('off', await opened({ DERIVED_GRAPH: 'false', DERIVED_EPISODES: 'false' }))
  for (const [k, l] of settings.entries()) {
    sides.set(names[k + 1]!, await opened({ DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'true', ...linkEnv(l) }))
  }
  type Totals = { ms: number; chunks: number; texts_embedded: number; vectors_reused: number; episodes: number; entities: number }
  const zero = (): Totals => ({ ms: 0, chunks: 0, texts_embedded: 0, vectors_reused: 0, episodes: 0, entities: 0 })
  const totals = new Map(names.map((n) => [n, zero()] as const))
  const perRound: Array<Record<string, number>> = []
  const loads: number[] = []
  const rate = (t: { ms: number; chunks: number }) => round(t.chunks / (t.ms / 1000), 1)
  const startedAt = loadavg().map((x) => round(x, 1))
  try {
    for (let r = 0, b = 0; r < rounds; r++) {
      // each round writes the corpus again, into a fresh namespace of every service
      const namespace = rounds === 1 ? 'synthetic' : `synthetic-${r + 1}`
      const roundMs = new Map<string, number>(names.map((n) => [n, 0]))
      for (let i = 0; i < docs.length; i += size, b++) {
        const batch = docs.slice(i, i + size)
        // every side first in turn, so that a busy machine's drift falls on all
        const order = [...names.slice(b % names.length), ...names.slice(0, b % names.length)]
        for (const side of order) {
          const t0 = performance.now()
          const written = await sides.get(side)!.services.writePath.write(namespace, { kind: 'documents', op: 'upsert', documents: batch })
          const ms = performance.now() - t0
          const t = totals.get(side)!
          t.ms += ms
          t.chunks += written.chunks
          roundMs.set(side, roundMs.get(side)! + ms)
          if (written.derived) {
            const d = written.derived as unknown as Record<string, number>
            t.texts_embedded += d['episode_texts_embedded'] ?? 0
            t.vectors_reused += d['episode_vectors_reused'] ?? 0
            t.episodes += d['episodes'] ?? 0
            t.entities += d['entities'] ?? 0
          }
        }
        loads.push(load())
        if (b % 10 === 9 || demo) {
          console.error(`round ${r + 1}, ${i + batch.length} documents`, JSON.stringify(Object.fromEntries(totals)), 'load', load())
          // so far, for a run stopped before the end
          const so = { round: r + 1, documents_written: i + batch.length, load_average_1m: load(), totals: Object.fromEntries(totals) }
          await writeFile(`bench/results/derived-quality-throughput-${which}${values.tag ? `-${values.tag}` : ''}.partial.json`, `${JSON.stringify(so, null, 2)}\n`)
        }
      }
      perRound.push(Object.fromEntries(names.slice(1).map((n) => [`${n}_over_off`, round(roundMs.get('off')! / roundMs.get(n)!)] as const)))
    }
  } finally {
    for (const side of sides.values()) await side.close()
  }
  const off = totals.get('off')!
  const figures = (t: Totals) => ({
    seconds: round(t.ms / 1000, 1), chunks: t.chunks, chunks_per_s: rate(t), episodes: t.episodes, entities: t.entities,
    episode_texts_embedded: t.texts_embedded, episode_vectors_reused: t.vectors_reused, over_off: round(rate(t) / rate(off))
  })
  return {
    documents: docs.length, batch_documents: size, rounds, entity_links: settings, load_average_at_start: startedAt,
    load_average_at_end: loadavg().map((x) => round(x, 1)), load_average_1m_mean: round(loads.reduce((a, b) => a + b, 0) / loads.length, 1),
    off: { seconds: round(off.ms / 1000, 1), chunks: off.chunks, chunks_per_s: rate(off) },
    ...Object.fromEntries(names.slice(1).map((n) => [n, figures(totals.get(n)!)] as const)),
    ...(settings.length === 1 ? { on_over_off: round(rate(totals.get('on')!) / rate(off)) } : {}),
    ...(rounds > 1 ? { per_round: perRound } : {})
  }
}

/** How many documents' parts the derived entities carry (each write touching an entity rewrites all of its parts). */
async function partsPerEntity(services: Services): Promise<Record<string, number>> {
  const ids = (await services.graph.names('synthetic')).map((e) => e.id)
  const parts: number[] = []
  for (let i = 0; i < ids.length; i += 1000) {
    for (const e of await services.graph.getEntities('synthetic', ids.slice(i, i + 1000))) parts.push(e.derived_from?.length ?? 0)
  }
  parts.sort((a, b) => a - b)
  const at = (q: number) => parts[Math.min(parts.length - 1, Math.floor(q * parts.length))] ?? 0
  return { entities: parts.length, parts_mean: round(parts.reduce((a, b) => a + b, 0) / Math.max(1, parts.length), 1), parts_p50: at(0.5), parts_p99: at(0.99), parts_max: at(1) }
}

/** The bytes under a folder, in MiB; a file a background merge removes meanwhile counts nothing. */
async function mibOf(dir: string): Promise<number> {
  let bytes = 0
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue
    bytes += (await stat(join(entry.parentPath, entry.name)).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return { size: 0 }
      throw e
    })).size
  }
  return round(bytes / 2 ** 20, 1)
}

async function main(): Promise<void> {
  await mkdir('bench/results', { recursive: true })
  const at = new Date().toISOString()
  let part: string
  let report: Record<string, unknown>
  if (values.variants) {
    part = 'variants'
    report = await variants()
  } else if (values.cost) {
    part = 'cost'
    report = await cost(Number(values.cost))
  } else if (values.evaluate) {
    part = values.evaluate === 'cmrc' ? `cmrc-${values.questions}` : values.evaluate
    report = await evaluate(values.evaluate)
  } else if (values.throughput) {
    part = `throughput-${values.throughput}${standInVectors ? '-standin' : ''}`
    report = values.links || Number(values.rounds) > 1 ? await throughputByLinks(values.throughput) : await throughput(values.throughput)
  } else throw new Error('one of --variants, --evaluate es6|cmrc, --throughput N')
  if (values.tag) part = `${part}-${values.tag}`
  const out = { generated_by: 'bench/derived-quality.ts', at, defaults: { ...DEFAULT_EPISODE_OPTIONS }, ...report }
  console.log(JSON.stringify(out, null, 2))
  await writeFile(`bench/results/derived-quality-${part}.json`, `${JSON.stringify(out, null, 2)}\n`)
}

await main()
