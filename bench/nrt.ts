/**
 * Near-real-time writes at scale, through the service: for each corpus size, bulk-load the corpus, then
 * measure hybrid queries over HTTP at rest and while one document is ingested and then deleted (time the
 * ingest call takes, time from its answer until a search finds it, the same for the delete, p99 meanwhile
 * against the idle p99, 503 answers), memory, and start-up from the saved files. Then 200k chunks: ingest,
 * persist, reload. Writes bench/results/nrt.json.
 *
 *   npx tsx bench/nrt.ts [--sizes 10000,50000,100000] [--big 200000] [--seconds 8]      (make bench-nrt)
 *   npx tsx bench/nrt.ts --base ../wt-before [--sizes 10000] [--seconds 8] [--cycles 5]
 *
 * With `--base DIR` (a checkout of an earlier main with node_modules and models linked) both trees' services are
 * loaded into this process over the same corpus and embedder, each behind its own app, and measured alternately cell by
 * cell (idle queries, then each ingest + delete cycle under the query load, the tree going first alternating):
 * bench/results/nrt-vs-base.json gives each tree's medians and the ratios this ÷ base.
 *
 * What each figure includes:
 * - Bulk corpora get vectors from a deterministic stand-in embedder (a unit vector seeded by the text's
 *   hash; the vector leg's cost does not depend on the values): the local model embeds ~25 passages/s here
 *   (bench/results/embedder.json), 100k chunks would take over an hour. Bulk-load times therefore cover
 *   chunking, the vector store's log writes and the lexical index (worker builds, merges), not the model.
 * - The one document ingested under measurement goes through the real path: HTTP, the real local model,
 *   the vector store, the lexical worker.
 * - Query embeddings are computed up front with the real model (cached in bench/.work/), so the query load
 *   measures the service (vector and lexical legs, fusion, HTTP), not a queue in front of the one ONNX
 *   session. The client runs in the same process as the server, as in bench/hybrid.ts; the overload guard
 *   keeps its defaults (503 above 1 s of event-loop delay), the rate limit and caches are off.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/http/app.js'
import { loadConfig } from '../src/config.js'
import { envPairs } from './lib/env-pairs.js'
import { DocumentLibrary, type DocumentInput } from '../src/corpus/documents.js'
import { LocalEmbedder } from '../src/providers/embedder/local.js'
import type { Embedder } from '../src/providers/embedder/port.js'
import { EmbeddedLexicalIndex } from '../src/providers/lexical-index/embedded.js'
import { EmbeddedLexicalIndexes } from '../src/providers/lexical-index/indexes.js'
import { EmbeddedVectorStore } from '../src/providers/vector-store/embedded.js'
import { openServices, type Services } from '../src/services.js'
import { createRuntime } from '../src/runtime.js'
import { loadCmrc } from './lib/cmrc.js'
import { DOCUMENTS_ONLY, modelDir } from './lib/corpus.js'
import { cachedQueryVectors } from './lib/query-vectors.js'
import { standIn, syntheticDocuments } from './lib/synthetic.js'
import { loadTree, type Tree } from './lib/tree.js'

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,50000,100000' }, big: { type: 'string', default: '200000' }, seconds: { type: 'string', default: '8' },
    base: { type: 'string' }, cycles: { type: 'string', default: '5' },
    // settings given to both trees' services (a tree ignores a key it does not know), e.g. DERIVED_GRAPH=false
    env: { type: 'string', default: '' }
  }
})
const sizes = values.sizes!.split(',').map(Number).filter((n) => n > 0)
const big = Number(values.big)
const seconds = Number(values.seconds)
const CONCURRENCY = 4
const CYCLES = 5
const WORK = 'bench/.work'

const pct = (xs: readonly number[], p: number) => {
  if (xs.length === 0) return null
  const s = [...xs].sort((a, b) => a - b)
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 100) / 100
}
const r2 = (x: number) => Math.round(x * 100) / 100
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const mib = (bytes: number) => Math.round(bytes / 2 ** 20)

/** Queries from the precomputed table; passages from the stand-in, or the real model while `real` is set. */
class BenchEmbedder implements Embedder {
  real = false
  constructor(private readonly inner: LocalEmbedder, private readonly queries: Map<string, Float32Array>) {}
  get model() { return this.inner.model }
  get dimensions() { return this.inner.dimensions }
  async embedQueries(texts: readonly string[]) { return Promise.all(texts.map(async (t) => this.queries.get(t) ?? (await this.inner.embedQueries([t]))[0]!)) }
  async embedPassages(texts: readonly string[]) { return this.real ? this.inner.embedPassages(texts) : texts.map(standIn) }
  health() { return this.inner.health() }
  async close() {}
}

interface Sample { start: number; end: number; status: number }

/** Hybrid queries from CONCURRENCY clients until `stop()`; every sample keeps its start and end times. */
function queryLoad(url: string, questions: readonly string[]) {
  const samples: Sample[] = []
  let running = true
  let next = 0
  const client = async () => {
    while (running) {
      const q = questions[next++ % questions.length]!
      const start = performance.now()
      const r = await fetch(`${url}/retrieve?mode=hybrid&top_k=10&q=${encodeURIComponent(q)}`)
      await r.arrayBuffer()
      samples.push({ start, end: performance.now(), status: r.status })
    }
  }
  const clients = Promise.all(Array.from({ length: CONCURRENCY }, client))
  return { samples, async stop() { running = false; await clients } }
}

function summarise(samples: readonly Sample[]) {
  const ok = samples.filter((s) => s.status === 200).map((s) => s.end - s.start)
  return { requests: samples.length, p50_ms: pct(ok, 50), p99_ms: pct(ok, 99), max_ms: pct(ok, 100), status_503: samples.filter((s) => s.status === 503).length, other_errors: samples.filter((s) => s.status !== 200 && s.status !== 503).length }
}

async function lexicalIds(url: string, q: string): Promise<string[]> {
  const r = await fetch(`${url}/retrieve?mode=hybrid&legs=lexical&top_k=5&q=${encodeURIComponent(q)}`)
  return ((await r.json()) as { recall_bundle: { id: string }[] }).recall_bundle.map((i) => i.id)
}

/** Polls until `done` holds; the milliseconds from `since` to the first poll that saw it. */
async function until(since: number, done: () => Promise<boolean>): Promise<number> {
  for (;;) {
    if (await done()) return performance.now() - since
    if (performance.now() - since > 60_000) throw new Error('not visible after 60 s')
  }
}

async function bulkLoad(services: Services, docs: readonly DocumentInput[]): Promise<number> {
  const started = performance.now()
  for (let i = 0; i < docs.length; i += 1000) {
    await services.writePath.write('default', { kind: 'documents', op: 'upsert', documents: docs.slice(i, i + 1000) })
    if (i % 20_000 === 0) console.error(`  loaded ${i}/${docs.length}`)
  }
  return (performance.now() - started) / 1000
}

/** Start-up from the saved files: the vector store's load, then the library's open (catalog, lexical load and reconcile). */
async function reopen(dataDir: string, embedder: Embedder, collection: string) {
  const vectors = new EmbeddedVectorStore({ dir: join(dataDir, 'vectors') })
  const indexes = new EmbeddedLexicalIndexes({ dir: join(dataDir, 'bm25'), name: 'chunks' })
  const library = new DocumentLibrary({ vectors, embedder, lexical: indexes }, { collection, namespace: 'default' })
  const lexical = indexes.get('default')
  const started = performance.now()
  await vectors.count(collection, 'default')
  const vectorsLoaded = performance.now()
  await library.open()
  const done = performance.now()
  const out = {
    seconds: r2((done - started) / 1000),
    vector_store_load_s: r2((vectorsLoaded - started) / 1000),
    catalog_and_lexical_s: r2((done - vectorsLoaded) / 1000),
    chunks: library.chunkCount,
    lexical: lexical.size
  }
  await lexical.close()
  await vectors.close()
  return out
}

/** One ingest + delete cycle through HTTP under the query load: the call times and the times until searches see them. */
async function oneCycle(url: string, embedder: BenchEmbedder, real: boolean, tag: string, text: string) {
  const doc = { id: `nrt-${tag}`, text }
  const mine = (ids: string[]) => ids.some((id) => id.startsWith(`${doc.id}#`))
  embedder.real = real
  let t = performance.now()
  const ingest = await fetch(`${url}/ingest/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ documents: [doc] }) })
  await ingest.arrayBuffer()
  const ingestMs = performance.now() - t
  if (ingest.status !== 200) throw new Error(`ingest ${doc.id}: ${ingest.status}`)
  const answered = performance.now()
  const foundMs = await until(answered, async () => mine(await lexicalIds(url, tag)))
  embedder.real = false
  t = performance.now()
  const del = await fetch(`${url}/documents/${doc.id}`, { method: 'DELETE' })
  await del.arrayBuffer()
  const deleteMs = performance.now() - t
  if (del.status !== 200) throw new Error(`delete ${doc.id}: ${del.status}`)
  const goneMs = await until(performance.now(), async () => !mine(await lexicalIds(url, tag)))
  return { ingest_call_ms: ingestMs, found_over_http_after_answer_ms: foundMs, delete_call_ms: deleteMs, gone_over_http_after_answer_ms: goneMs }
}

/** Each tree's app over the same corpus, measured alternately cell by cell; medians and ratios this ÷ base. */
async function sideBySide(baseDir: string): Promise<void> {
  const trees: Tree[] = [loadTree('base', baseDir), loadTree('this', '.')]
  const cycles = Number(values.cycles)
  const load1m: number[] = [loadavg()[0]!]
  const { documents, queries } = await loadCmrc()
  const questions = [...new Set(queries.map((q) => q.query))].filter((q) => q.trim() !== '')
  const corpus = syntheticDocuments(documents.map((d) => d.text), Math.max(...sizes), 17)
  const model = new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' })
  const queryVectors = await cachedQueryVectors(model, questions, WORK)
  // the overload guard off and timeouts far above the defaults: on a machine this busy either would cut requests of
  // either tree at random
  const env = {
    DEMO_DATA: 'false', LOG_LEVEL: 'silent', PORT: '0', RATE_LIMIT_MAX: '0', CACHE_TTL_SECONDS: '0', EMBEDDING_CACHE_TTL_SECONDS: '0',
    MAX_EVENT_LOOP_DELAY_MS: '0', MAX_EMBEDDING_WAIT_MS: '0', EMBEDDING_TIMEOUT_MS: '60000', VECTOR_TIMEOUT_MS: '60000', LEXICAL_TIMEOUT_MS: '60000',
    ...envPairs(values.env)
  }
  const median = (xs: number[]) => pct(xs, 50)
  const ratio = (a: number | null, b: number | null) => (a !== null && b !== null && b > 0 ? Math.round((a / b) * 1000) / 1000 : null)
  const results: Record<string, unknown>[] = []
  type Cycle = Awaited<ReturnType<typeof oneCycle>>
  for (const size of sizes) {
    const served: Array<{ tree: Tree; url: string; embedder: BenchEmbedder; idle: Sample[]; during: Sample[]; cycles: Record<string, Cycle[]>; close(): Promise<void> }> = []
    for (const tree of trees) {
      const dataDir = await mkdtemp(join(tmpdir(), `recall-bench-nrt-${tree.name}-`))
      const config = await tree.loadConfig({ ...env, DATA_DIR: dataDir, ...DOCUMENTS_ONLY })
      const embedder = new BenchEmbedder(model, queryVectors)
      const services = await tree.openServices(config, (base) => ({ ...base, embedder }))
      console.error(`${tree.name} (${tree.commit}): ${size} chunks: bulk load`)
      for (let i = 0; i < size; i += 1000) await tree.write(services, 'default', { kind: 'documents', op: 'upsert', documents: corpus.slice(i, Math.min(size, i + 1000)) })
      await services.lexical.get('default').idle()
      const app = await tree.buildApp(config, services)
      const url = await app.listen({ port: 0, host: '127.0.0.1' })
      const warm = queryLoad(url, questions)
      await sleep(2000)
      await warm.stop()
      served.push({ tree, url, embedder, idle: [], during: [], cycles: { 'real model': [], 'stand-in': [] }, async close() { await app.close(); await rm(dataDir, { recursive: true, force: true }) } })
    }
    let cell = 0
    const order = () => (cell++ % 2 === 0 ? served : [...served].reverse())
    for (const s of order()) {
      const idle = queryLoad(s.url, questions)
      await sleep(seconds * 1000)
      await idle.stop()
      s.idle.push(...idle.samples)
    }
    for (let c = 0; c < cycles; c++) {
      for (const mode of ['real model', 'stand-in'] as const) {
        for (const s of order()) {
          const busy = queryLoad(s.url, questions)
          await sleep(500)
          const tag = `tagnrt${size}x${c}${mode === 'real model' ? 'r' : 's'}${s.tree.name}`
          s.cycles[mode]!.push(await oneCycle(s.url, s.embedder, mode === 'real model', tag, `# 实时写入 ${tag}

${documents[3 + c]!.text}

## 第二节

${documents[40 + c]!.text}`))
          await busy.stop()
          s.during.push(...busy.samples)
        }
        load1m.push(loadavg()[0]!)
      }
    }
    const ofCycles = (cs: Cycle[]): Record<string, number | null> => ({
      ingest_call_ms_p50: median(cs.map((x) => x.ingest_call_ms)),
      found_over_http_after_answer_ms_p50: median(cs.map((x) => x.found_over_http_after_answer_ms)),
      delete_call_ms_p50: median(cs.map((x) => x.delete_call_ms)),
      gone_over_http_after_answer_ms_p50: median(cs.map((x) => x.gone_over_http_after_answer_ms))
    })
    const figures = (s: (typeof served)[number]) => ({
      hybrid_idle: summarise(s.idle),
      hybrid_during_cycles: summarise(s.during),
      real_model: ofCycles(s.cycles['real model']!),
      stand_in: ofCycles(s.cycles['stand-in']!)
    })
    const [b, t] = served.map(figures) as [ReturnType<typeof figures>, ReturnType<typeof figures>]
    const ratios: Record<string, number | null> = {
      hybrid_idle_p50: ratio(t.hybrid_idle.p50_ms, b.hybrid_idle.p50_ms),
      hybrid_idle_p99: ratio(t.hybrid_idle.p99_ms, b.hybrid_idle.p99_ms),
      hybrid_during_cycles_p99: ratio(t.hybrid_during_cycles.p99_ms, b.hybrid_during_cycles.p99_ms)
    }
    for (const mode of ['real_model', 'stand_in'] as const) {
      for (const [key, value] of Object.entries(t[mode])) ratios[`${mode}.${key}`] = ratio(value, b[mode][key] ?? null)
    }
    results.push({ chunks: size, base: b, this: t, ratio_this_over_base: ratios })
    console.error(`${size} chunks: ${JSON.stringify(ratios)}`)
    for (const s of served) await s.close()
  }
  await model.close()
  const out = {
    generated_by: 'bench/nrt.ts --base',
    at: new Date().toISOString(),
    trees: Object.fromEntries(trees.map((t) => [t.name, t.commit])),
    env: envPairs(values.env),
    machine: { cpus: cpus().length, node: process.version, loadavg_1m: { at_start: load1m[0], max: Math.max(...load1m), at_end: load1m[load1m.length - 1] }, note: 'shared machine: compare the ratios, not the absolute figures' },
    method: `both trees' services in one process over the same stand-in corpus, each behind its own app; ${seconds} s of idle queries ` +
      `(${CONCURRENCY} clients), then ${cycles} ingest + delete cycles per embedder (the real model, the stand-in), each under ${CONCURRENCY} ` +
      'query clients; the tree going first alternates cell by cell; medians of the cycles; overload guard off, leg timeouts 60 s',
    results
  }
  await writeFile('bench/results/nrt-vs-base.json', `${JSON.stringify(out, null, 2)}\n`)
}

async function main(): Promise<void> {
  if (values.base) return sideBySide(values.base)
  const loadAtStart = loadavg()
  const { documents, queries } = await loadCmrc()
  // one CMRC question is blank, which the service rightly answers with 400
  const questions = [...new Set(queries.map((q) => q.query))].filter((q) => q.trim() !== '')
  const largest = Math.max(big, ...sizes)
  const corpus = syntheticDocuments(documents.map((d) => d.text), largest, 17)
  console.error(`corpus: ${corpus.length} one-chunk documents`)
  const model = new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' })
  const embedder = new BenchEmbedder(model, await cachedQueryVectors(model, questions, WORK))
  const env = { DEMO_DATA: 'false', LOG_LEVEL: 'silent', PORT: '0', RATE_LIMIT_MAX: '0', CACHE_TTL_SECONDS: '0', EMBEDDING_CACHE_TTL_SECONDS: '0' }
  const results: Record<string, unknown>[] = []

  for (const size of sizes) {
    const dataDir = await mkdtemp(join(tmpdir(), 'recall-bench-nrt-'))
    const config = loadConfig({ ...env, DATA_DIR: dataDir, ...DOCUMENTS_ONLY })
    const services = await openServices(config, { providers: (base) => ({ ...base, embedder }) })
    console.error(`${size} chunks: bulk load`)
    const bulk = await bulkLoad(services, corpus.slice(0, size))
    const lexical = services.lexical.get('default') as EmbeddedLexicalIndex
    const settleStart = performance.now()
    await lexical.idle()
    const settle = (performance.now() - settleStart) / 1000
    const app: FastifyInstance = await buildApp(createRuntime(services), { logger: false })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const warm = queryLoad(url, questions)
    await sleep(2000)
    await warm.stop()

    const idle = queryLoad(url, questions)
    await sleep(seconds * 1000)
    await idle.stop()

    // CYCLES times: ingest one document, wait until a lexical query over HTTP finds it, delete it, wait until
    // it is gone; once with the real model embedding the document, once with the stand-in (which isolates
    // the index from the model's CPU use on this 2-core machine)
    const cycles: Record<string, unknown>[] = []
    const windows: [number, number, string][] = []
    const busy = queryLoad(url, questions)
    await sleep(1000)
    for (const mode of ['real model', 'stand-in'] as const) {
      for (let c = 0; c < CYCLES; c++) {
        const tag = `tagnrt${size}x${c}${mode === 'real model' ? 'r' : 's'}`
        const doc = { id: `nrt-${tag}`, text: `# 实时写入 ${tag}\n\n${documents[3 + c]!.text}\n\n## 第二节\n\n${documents[40 + c]!.text}` }
        const mine = (ids: string[]) => ids.some((id) => id.startsWith(`${doc.id}#`))
        embedder.real = mode === 'real model'
        const windowStart = performance.now()
        let t = performance.now()
        const ingest = await fetch(`${url}/ingest/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ documents: [doc] }) })
        const ingestBody = await ingest.json() as { chunks: number }
        const ingestMs = performance.now() - t
        const answered = performance.now()
        const inProcess = mine((await lexical.search(tag, 5)).map((h) => h.id))
        const inProcessMs = performance.now() - answered
        let polls = 0
        const searchableMs = await until(answered, async () => { polls++; return mine(await lexicalIds(url, tag)) })
        embedder.real = false
        t = performance.now()
        const del = await fetch(`${url}/documents/${doc.id}`, { method: 'DELETE' })
        const deleteMs = performance.now() - t
        const deleted = performance.now()
        const goneInProcess = !mine((await lexical.search(tag, 5)).map((h) => h.id))
        const goneMs = await until(deleted, async () => !mine(await lexicalIds(url, tag)))
        windows.push([windowStart, performance.now() + 500, mode])
        cycles.push({
          embedder: mode, chunks: ingestBody.chunks, ingest_status: ingest.status, ingest_call_ms: r2(ingestMs),
          found_in_process_right_after_answer: inProcess, in_process_check_ms: r2(inProcessMs),
          found_over_http_after_answer_ms: r2(searchableMs), http_polls: polls,
          delete_status: del.status, delete_call_ms: r2(deleteMs), gone_in_process_right_after_answer: goneInProcess,
          gone_over_http_after_answer_ms: r2(goneMs)
        })
        await sleep(700)
      }
    }
    await sleep(1000)
    await busy.stop()
    const inWindows = (mode: string) => busy.samples.filter((s) => windows.some(([a, b, m]) => m === mode && s.end >= a && s.start <= b))
    const idleSummary = summarise(idle.samples)
    const duringReal = summarise(inWindows('real model'))
    const duringStandIn = summarise(inWindows('stand-in'))
    const ratio = (x: { p99_ms: number | null }) => (idleSummary.p99_ms && x.p99_ms ? r2(x.p99_ms / idleSummary.p99_ms) : null)
    const column = (key: string) => cycles.map((c) => c[key] as number)
    const mem = process.memoryUsage()
    const row = {
      chunks: size,
      bulk_load_seconds: r2(bulk),
      bulk_load_chunks_per_s: Math.round(size / bulk),
      merges_settled_after_s: r2(settle),
      one_document_cycles: cycles,
      one_document_summary: {
        ingest_call_ms_median_real_model: pct(cycles.filter((c) => c.embedder === 'real model').map((c) => c.ingest_call_ms as number), 50),
        ingest_call_ms_median_stand_in: pct(cycles.filter((c) => c.embedder === 'stand-in').map((c) => c.ingest_call_ms as number), 50),
        found_in_process_right_after_every_answer: cycles.every((c) => c.found_in_process_right_after_answer === true),
        gone_in_process_right_after_every_answer: cycles.every((c) => c.gone_in_process_right_after_answer === true),
        found_over_http_after_answer_ms_max: Math.max(...column('found_over_http_after_answer_ms')),
        gone_over_http_after_answer_ms_max: Math.max(...column('gone_over_http_after_answer_ms')),
        delete_call_ms_median: pct(column('delete_call_ms'), 50)
      },
      hybrid_idle: idleSummary,
      hybrid_during_writes_real_model: duringReal,
      hybrid_during_writes_stand_in: duringStandIn,
      p99_ratio_vs_idle: { real_model: ratio(duringReal), stand_in: ratio(duringStandIn) },
      hybrid_whole_busy_phase: summarise(busy.samples),
      lexical_segments: lexical.segmentCount,
      memory_mib: { rss: mib(mem.rss), heap_used: mib(mem.heapUsed), array_buffers: mib(mem.arrayBuffers), lexical_index: mib(lexical.memoryBytes) }
    }
    await app.close()
    const reopened = await reopen(dataDir, embedder, `${config.collectionPrefix}chunks`)
    results.push({ ...row, start_up_from_saved_files: reopened })
    console.error(JSON.stringify(results[results.length - 1]))
    await rm(dataDir, { recursive: true, force: true })
  }

  let large: Record<string, unknown> | undefined
  if (big > 0) {
    const dataDir = await mkdtemp(join(tmpdir(), 'recall-bench-nrt-big-'))
    const config = loadConfig({ ...env, DATA_DIR: dataDir, ...DOCUMENTS_ONLY })
    const services = await openServices(config, { providers: (base) => ({ ...base, embedder }) })
    console.error(`${big} chunks: ingest, persist, reload`)
    const bulk = await bulkLoad(services, corpus.slice(0, big))
    const lexical = services.lexical.get('default') as EmbeddedLexicalIndex
    await lexical.idle()
    const probe = corpus[big - 7]!
    const before = (await lexical.search(probe.text, 1))[0]?.id
    const mem = process.memoryUsage()
    const memory = { rss: mib(mem.rss), heap_used: mib(mem.heapUsed), lexical_index: mib(lexical.memoryBytes) }
    await services.close()
    const reopened = await reopen(dataDir, embedder, `${config.collectionPrefix}chunks`)
    const check = new EmbeddedLexicalIndex({ dir: join(dataDir, 'bm25', 'chunks') })
    const after = (await check.search(probe.text, 1))[0]?.id
    await check.close()
    large = {
      chunks: big, ingest_seconds: r2(bulk), chunks_per_s: Math.round(big / bulk), memory_mib_after_ingest: memory,
      reload: reopened, same_top_hit_after_reload: before === after && before === `${probe.id}#0`
    }
    console.error(JSON.stringify(large))
    await rm(dataDir, { recursive: true, force: true })
  }
  await model.close()
  const out = {
    generated_by: 'bench/nrt.ts',
    at: new Date().toISOString(),
    machine: { cpus: cpus().length, memory_gb: Math.round(totalmem() / 2 ** 30), node: process.version, loadavg_1m_at_start: loadAtStart[0], loadavg_1m_at_end: loadavg()[0], note: 'shared machine: other engineers worked at the same time' },
    method: {
      query_load: `${CONCURRENCY} clients, GET /retrieve?mode=hybrid&top_k=10 over loopback, CMRC questions cycled, ${seconds} s at rest, then while ${CYCLES} ingest+delete cycles run with each embedder`,
      during_window: 'requests overlapping [ingest sent, 500 ms after the delete became invisible], per embedder',
      searchable_after_answer: 'in process: a search right after the answer; over HTTP: from the answer until a lexical-leg GET /retrieve sees it (polling; one poll is one full query under the concurrent load)',
      embedder: 'bulk corpus: deterministic stand-in vectors; the measured document: the real local model; queries: real vectors computed up front',
      corpus: 'one-chunk documents recombined from CMRC 2018 sentences (bench/lib/synthetic.ts)'
    },
    results,
    ...(large ? { ingest_persist_reload: large } : {})
  }
  await writeFile('bench/results/nrt.json', `${JSON.stringify(out, null, 2)}\n`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
