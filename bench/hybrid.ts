/**
 * Hybrid latency through HTTP at 1k, 10k and 50k chunks on the embedded store, one client and 16
 * concurrent, with the query embedding and each leg reported separately; ingestion rate and resident
 * memory at 10k chunks. Writes bench/results/hybrid.json.
 *
 *   npx tsx bench/hybrid.ts [--sizes 1000,10000,50000] [--requests 400] [--real 10000]
 *   npx tsx bench/hybrid.ts --base ../wt-before [--sizes 1000,10000] [--requests 150] [--rounds 3]
 *
 * With `--base DIR` (a checkout of an earlier main with node_modules and models linked) both trees' services run in
 * this process over the same corpus, vectors and model, each behind its own app; the load alternates between them cell
 * by cell (a cell: one round of one client count) and bench/results/hybrid-vs-base.json gives each tree's latencies
 * and the ratio this ÷ base, so that a busy machine's drift falls on both.
 *
 * Chunks are real Chinese text (windows of CMRC 2018 sentences, bench/lib/synthetic.ts). The first `--real`
 * chunks get real model vectors (cached under bench/.work/); past that, a chunk's vector is a real vector
 * plus Gaussian noise, renormalised: exact-cosine cost does not depend on the values, and embedding 50k
 * chunks with the local model would take over 20 minutes on this machine.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { buildApp } from '../src/http/app.js'
import { loadConfig } from '../src/config.js'
import { LocalEmbedder } from '../src/providers/embedder/local.js'
import type { Embedder } from '../src/providers/embedder/port.js'
import { EmbeddedLexicalIndexes } from '../src/providers/lexical-index/indexes.js'
import { EmbeddedVectorStore } from '../src/providers/vector-store/embedded.js'
import { openServices } from '../src/services.js'
import { createRuntime } from '../src/runtime.js'
import { loadCmrc } from './lib/cmrc.js'
import { DOCUMENTS_ONLY, modelDir } from './lib/corpus.js'
import { rng, syntheticDocuments } from './lib/synthetic.js'
import { loadTree, type Tree } from './lib/tree.js'

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,10000,50000' },
    requests: { type: 'string', default: '400' },
    real: { type: 'string', default: '10000' },
    base: { type: 'string' },
    rounds: { type: 'string', default: '3' }
  }
})
const sizes = values.sizes!.split(',').map(Number)
const requests = Number(values.requests)
const realLimit = Number(values.real)
const WORK = 'bench/.work'

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 100) / 100
}
const summary = (xs: number[]) => ({ p50: pct(xs, 50), p95: pct(xs, 95), p99: pct(xs, 99) })

/** Real vectors for the first texts, cached on disk across runs (the corpus is deterministic). */
async function realVectors(model: LocalEmbedder, texts: string[]): Promise<{ vectors: Float32Array[]; rate?: number }> {
  const path = join(WORK, `vectors-${texts.length}.f32`)
  try {
    const buf = await readFile(path)
    const all = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4)
    if (all.length === texts.length * 512) {
      return { vectors: texts.map((_, i) => all.slice(i * 512, (i + 1) * 512)) }
    }
  } catch { /* not cached yet */ }
  const started = performance.now()
  const vectors: Float32Array[] = []
  for (let i = 0; i < texts.length; i += 32) {
    vectors.push(...await model.embedPassages(texts.slice(i, i + 32)))
    if (i % 1024 === 0) console.error(`  embedded ${i}/${texts.length}`)
  }
  const rate = texts.length / ((performance.now() - started) / 1000)
  await mkdir(WORK, { recursive: true })
  const flat = new Float32Array(texts.length * 512)
  vectors.forEach((v, i) => flat.set(v, i * 512))
  await writeFile(path, Buffer.from(flat.buffer))
  return { vectors, rate }
}

function perturbed(base: Float32Array[], count: number, seed: number): Float32Array[] {
  const random = rng(seed)
  const gauss = () => Math.sqrt(-2 * Math.log(random() + 1e-12)) * Math.cos(2 * Math.PI * random())
  return Array.from({ length: count }, () => {
    const src = base[Math.floor(random() * base.length)]!
    const v = new Float32Array(512)
    let norm = 0
    for (let d = 0; d < 512; d++) { v[d] = src[d]! + 0.03 * gauss(); norm += v[d]! * v[d]! }
    norm = Math.sqrt(norm)
    for (let d = 0; d < 512; d++) v[d]! /= norm
    return v
  })
}

/** Passages come from the precomputed table; queries go to the real model. */
class TableEmbedder implements Embedder {
  constructor(private readonly inner: Embedder, private readonly table: Map<string, Float32Array>) {}
  get model() { return this.inner.model }
  get dimensions() { return this.inner.dimensions }
  embedQueries(texts: readonly string[]) { return this.inner.embedQueries(texts) }
  async embedPassages(texts: readonly string[]) { return texts.map((t) => this.table.get(t)!) }
  health() { return this.inner.health() }
  // The model is shared by every corpus size; main() closes it at the end.
  async close() {}
}

interface Sample { total: number; server: number; embedding: number; vector: number; lexical: number }

async function load(url: string, queries: string[], concurrency: number, count: number): Promise<Sample[]> {
  const samples: Sample[] = []
  let next = 0
  const worker = async () => {
    while (next < count) {
      const q = queries[next++ % queries.length]!
      const started = performance.now()
      const r = await fetch(`${url}/retrieve?mode=hybrid&top_k=10&q=${encodeURIComponent(q)}`)
      const body = await r.json() as { took_ms: number; legs: { name: string; took_ms: number }[] }
      const total = performance.now() - started
      if (r.status !== 200) throw new Error(`status ${r.status}: ${JSON.stringify(body)}`)
      if (body.legs.some((l) => (l as { status?: string }).status !== 'ok')) throw new Error(`a leg did not answer: ${JSON.stringify(body.legs)}`)
      const leg = (n: string) => body.legs.find((l) => l.name === n)?.took_ms ?? 0
      samples.push({ total, server: body.took_ms, embedding: leg('embedding'), vector: leg('vector'), lexical: leg('lexical') })
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return samples
}

/** Each tree's app over the same corpus, the load alternating between them cell by cell; ratios this ÷ base. */
async function sideBySide(baseDir: string): Promise<void> {
  const trees: Tree[] = [loadTree('base', baseDir), loadTree('this', '.')]
  const rounds = Number(values.rounds)
  const { documents: paragraphs, queries } = await loadCmrc()
  const questions = queries.map((q) => q.query).filter((q) => q.trim() !== '') // the trial set has two blank questions
  const model = new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' })
  const allDocs = syntheticDocuments(paragraphs.map((p) => p.text), Math.max(...sizes))
  const realCount = Math.min(realLimit, allDocs.length)
  const real = await realVectors(model, allDocs.slice(0, realCount).map((d) => d.text))
  const vectors = [...real.vectors, ...perturbed(real.vectors, allDocs.length - realCount, 11)]
  const table = new Map(allDocs.map((d, i) => [d.text, vectors[i]!]))
  const load1m: number[] = [loadavg()[0]!]
  const results: Record<string, unknown>[] = []
  const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000
  for (const size of sizes) {
    const served: Array<{ tree: Tree; url: string; close(): Promise<void>; samples: Record<number, Sample[]>; seconds: Record<number, number> }> = []
    for (const tree of trees) {
      const dataDir = await mkdtemp(join(tmpdir(), `recall-bench-hybrid-${tree.name}-`))
      // timeouts far above the defaults: on a machine this busy a default timeout cuts a leg of either tree at random
      const config = await tree.loadConfig({
        DATA_DIR: dataDir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', PORT: '0', RATE_LIMIT_MAX: '0', MAX_EVENT_LOOP_DELAY_MS: '0', MAX_EMBEDDING_WAIT_MS: '0',
        CACHE_TTL_SECONDS: '0', EMBEDDING_CACHE_TTL_SECONDS: '0', EMBEDDING_TIMEOUT_MS: '60000', VECTOR_TIMEOUT_MS: '60000', LEXICAL_TIMEOUT_MS: '60000', ...DOCUMENTS_ONLY
      })
      const [{ EmbeddedVectorStore: Vectors }, { EmbeddedLexicalIndexes: Lexical }] = await Promise.all([
        tree.module('src/providers/vector-store/embedded.ts'), tree.module('src/providers/lexical-index/indexes.ts')
      ])
      const services = await tree.openServices(config, (base) => ({
        ...base, embedder: new TableEmbedder(model, table), vectors: new Vectors({ dir: join(dataDir, 'vectors') }), lexical: new Lexical({ dir: dataDir, name: 'bm25' })
      }))
      const docs = allDocs.slice(0, size)
      for (let i = 0; i < docs.length; i += 1000) await tree.write(services, 'default', { kind: 'documents', op: 'upsert', documents: docs.slice(i, i + 1000) })
      const app = await tree.buildApp(config, services)
      const url = await app.listen({ port: 0, host: '127.0.0.1' })
      await load(url, questions.slice(900), 4, 60) // warm-up
      served.push({ tree, url, samples: { 1: [], 16: [] }, seconds: { 1: 0, 16: 0 }, async close() { await app.close(); await rm(dataDir, { recursive: true, force: true }) } })
      console.error(`${tree.name} (${tree.commit}): ${size} chunks served at ${url}`)
    }
    let cell = 0
    for (let r = 0; r < rounds; r++) {
      for (const concurrency of [1, 16]) {
        // which tree goes first alternates from cell to cell and, for one client count, from round to round
        for (const s of (cell++ + r) % 2 === 0 ? served : [...served].reverse()) {
          const started = performance.now()
          s.samples[concurrency]!.push(...await load(s.url, questions, concurrency, requests))
          s.seconds[concurrency]! += (performance.now() - started) / 1000
        }
        load1m.push(loadavg()[0]!)
      }
    }
    const row: Record<string, unknown> = { chunks: size }
    for (const concurrency of [1, 16]) {
      const of = (s: (typeof served)[number]) => ({
        requests: s.samples[concurrency]!.length,
        answers_per_s: Math.round((s.samples[concurrency]!.length / s.seconds[concurrency]!) * 10) / 10,
        total_ms: summary(s.samples[concurrency]!.map((x) => x.total)),
        server_took_ms: summary(s.samples[concurrency]!.map((x) => x.server))
      })
      const [b, t] = served.map(of) as [ReturnType<typeof of>, ReturnType<typeof of>]
      row[`c${concurrency}`] = {
        base: b, this: t,
        ratio_this_over_base: {
          total_p50: ratio(t.total_ms.p50, b.total_ms.p50), total_p99: ratio(t.total_ms.p99, b.total_ms.p99),
          server_took_p50: ratio(t.server_took_ms.p50, b.server_took_ms.p50), answers_per_s: ratio(t.answers_per_s, b.answers_per_s)
        }
      }
      console.error(`${size} chunks, ${concurrency} client(s): ${JSON.stringify((row[`c${concurrency}`] as { ratio_this_over_base: unknown }).ratio_this_over_base)}`)
    }
    results.push(row)
    for (const s of served) await s.close()
  }
  await model.close()
  const out = {
    generated_by: 'bench/hybrid.ts --base',
    at: new Date().toISOString(),
    trees: Object.fromEntries(trees.map((t) => [t.name, t.commit])),
    method: `both trees' services in one process over the same one-chunk corpus and vectors (${realCount} real, the rest perturbed), ` +
      `each behind its own app; HTTP GET /retrieve?mode=hybrid&top_k=10 over loopback, CMRC questions cycled, ${requests} requests per ` +
      `cell, ${rounds} rounds, the two trees alternating which goes first cell by cell; caches, rate limit and overload guard off, ` +
      'leg timeouts 60 s',
    loadavg_1m: { at_start: load1m[0], max: Math.max(...load1m), at_end: load1m[load1m.length - 1] },
    machine_note: '2 cores shared with other sessions while measured: compare the ratios, not the absolute figures',
    results
  }
  await writeFile('bench/results/hybrid-vs-base.json', `${JSON.stringify(out, null, 2)}\n`)
}

async function main(): Promise<void> {
  if (values.base) return sideBySide(values.base)
  const { documents: paragraphs, queries } = await loadCmrc()
  const questions = queries.map((q) => q.query).filter((q) => q.trim() !== '') // the trial set has two blank questions
  const model = new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' })
  const largest = Math.max(...sizes)
  const allDocs = syntheticDocuments(paragraphs.map((p) => p.text), largest)
  const realCount = Math.min(realLimit, allDocs.length)
  console.error(`corpus: ${allDocs.length} one-chunk documents; real vectors for ${realCount}`)
  const real = await realVectors(model, allDocs.slice(0, realCount).map((d) => d.text))
  const vectors = [...real.vectors, ...perturbed(real.vectors, allDocs.length - realCount, 11)]
  const table = new Map(allDocs.map((d, i) => [d.text, vectors[i]!]))

  const results: Record<string, unknown>[] = []
  for (const size of sizes) {
    const dataDir = await mkdtemp(join(tmpdir(), 'recall-bench-hybrid-'))
    // Rate limit and overload guard off: the bench sends more than a client's share on purpose. Leg timeouts as the
    // environment gives them (bench/node-runtimes.ts raises them: on a loaded machine a deadline would end the run).
    const legTimeouts = Object.fromEntries(['EMBEDDING_TIMEOUT_MS', 'VECTOR_TIMEOUT_MS', 'LEXICAL_TIMEOUT_MS'].flatMap((k) => process.env[k] ? [[k, process.env[k]]] : []))
    const config = loadConfig({ DATA_DIR: dataDir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', PORT: '0', RATE_LIMIT_MAX: '0', MAX_EVENT_LOOP_DELAY_MS: '0', CACHE_TTL_SECONDS: '0', EMBEDDING_CACHE_TTL_SECONDS: '0', ...DOCUMENTS_ONLY, ...legTimeouts })
    const embedder = new TableEmbedder(model, table)
    const services = await openServices(config, {
      providers: (base) => ({
        ...base, embedder, vectors: new EmbeddedVectorStore({ dir: join(dataDir, 'vectors') }), lexical: new EmbeddedLexicalIndexes({ dir: dataDir, name: 'bm25' })
      })
    })
    const docs = allDocs.slice(0, size)
    const started = performance.now()
    for (let i = 0; i < docs.length; i += 1000) await services.writePath.write('default', { kind: 'documents', op: 'upsert', documents: docs.slice(i, i + 1000) })
    const ingestSeconds = (performance.now() - started) / 1000
    const rssMiB = Math.round(process.memoryUsage().rss / 2 ** 20)
    const app = await buildApp(createRuntime(services), { logger: false })
    const address = await app.listen({ port: 0, host: '127.0.0.1' })
    await load(address, questions.slice(900), 4, 60) // warm-up
    const runs: Record<string, unknown> = {}
    for (const concurrency of [1, 16]) {
      const samples = await load(address, questions, concurrency, requests)
      const own = samples.map((s) => s.server - Math.max(s.embedding + s.vector, s.lexical))
      runs[`c${concurrency}`] = {
        requests: samples.length,
        total_ms: summary(samples.map((s) => s.total)),
        server_took_ms: summary(samples.map((s) => s.server)),
        embedding_ms: summary(samples.map((s) => s.embedding)),
        vector_ms: summary(samples.map((s) => s.vector)),
        lexical_ms: summary(samples.map((s) => s.lexical)),
        total_minus_embedding_ms: summary(samples.map((s) => s.total - s.embedding)),
        service_own_ms: summary(own),
        http_overhead_ms: summary(samples.map((s) => s.total - s.server))
      }
      console.error(`${size} chunks, ${concurrency} client(s): ${JSON.stringify(runs[`c${concurrency}`])}`)
    }
    results.push({
      chunks: services.documents.chunkCount,
      ingest_seconds_excluding_embedding: Math.round(ingestSeconds * 100) / 100,
      rss_mib_after_ingest: rssMiB,
      ...runs
    })
    await app.close()
    await rm(dataDir, { recursive: true, force: true })
  }
  const out = {
    date: new Date().toISOString(),
    machine: '2 cores, 24 GiB (shared with other work while measured; see the note)',
    method: 'HTTP GET /retrieve?mode=hybrid&top_k=10 over loopback with keep-alive; 1,002 CMRC questions cycled',
    real_vectors: realCount,
    passage_embedding_rate_per_s: real.rate ? Math.round(real.rate * 10) / 10 : 'cached (see an earlier run)',
    service_own_definition: 'server took_ms minus max(embedding + vector, lexical): the legs run concurrently',
    results
  }
  await writeFile('bench/results/hybrid.json', `${JSON.stringify(out, null, 2)}\n`)
  await model.close()
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
