/**
 * Namespaces and filters at scale, side by side in one run (docs/namespaces.md). Writes bench/results/namespaces.json.
 *
 *   npx tsx bench/namespaces.ts [--chunks 10000] [--namespaces 10] [--filtered 50000] [--rounds 2]      (make bench-namespaces)
 *
 * 1. Hybrid p50 over 10k chunks in one namespace among 10 namespaces of 10k each (100k chunks in the
 *    service), against the same 10k chunks alone in a service of their own. Target: within 1.2x.
 * 2. Hybrid p50 with a filter keeping 1% of a 50k-chunk corpus (`metadata.bucket` = i mod 100, the filter
 *    `{"metadata": {"bucket": 7}}`) against the same question unfiltered. Target: within 1.5x.
 *
 * What each figure includes:
 * - A request is `POST /retrieve` through the app (`inject`: routing, validation, the hybrid adapter, both
 *   legs, fusion, serialisation), caches off, the overload guard and rate limit off, one at a time. The arms
 *   of a comparison take turns question by question, so drift on the shared machine falls on both alike.
 * - Query vectors are the real model's (bge-small-zh-v1.5), computed before the measured loop and served from
 *   a table, so the figures are the service's own; `query_embedding_p50_ms` is the model's time for one
 *   question on this run, which a request that embeds live adds to every arm alike.
 * - Bulk chunk vectors come from a deterministic stand-in embedder (a unit vector seeded by the text's hash),
 *   as bench/nrt.ts does: the exact scan costs the same whatever the values, and the local model embeds ~25
 *   passages/s here. Chunk texts are real Chinese (windows of CMRC 2018 sentences, bench/lib/synthetic.ts).
 * - `vector_p50_ms` and `lexical_p50_ms` are the legs' own times from the answers' `legs`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/http/app.js'
import { loadConfig } from '../src/config.js'
import type { DocumentInput } from '../src/corpus/documents.js'
import { LocalEmbedder } from '../src/providers/embedder/local.js'
import type { Embedder } from '../src/providers/embedder/port.js'
import type { EmbeddedLexicalIndex } from '../src/providers/lexical-index/embedded.js'
import { openServices } from '../src/services.js'
import { createRuntime } from '../src/runtime.js'
import { loadCmrc } from './lib/cmrc.js'
import { DOCUMENTS_ONLY, modelDir } from './lib/corpus.js'
import { cachedQueryVectors } from './lib/query-vectors.js'
import { standIn, syntheticDocuments } from './lib/synthetic.js'

const { values } = parseArgs({
  options: {
    chunks: { type: 'string', default: '10000' },
    namespaces: { type: 'string', default: '10' },
    filtered: { type: 'string', default: '50000' },
    rounds: { type: 'string', default: '2' }
  }
})
const CHUNKS = Number(values.chunks)
const NAMESPACES = Number(values.namespaces)
const FILTERED = Number(values.filtered)
const ROUNDS = Number(values.rounds)
const WORK = 'bench/.work'

const pct = (xs: readonly number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 100) / 100
}
const r2 = (x: number) => Math.round(x * 100) / 100
const load = () => loadavg().map(r2)

/** Queries from the table of real vectors; passages from the stand-in. */
class BenchEmbedder implements Embedder {
  constructor(private readonly inner: LocalEmbedder, private readonly queries: Map<string, Float32Array>) {}
  get model() { return this.inner.model }
  get dimensions() { return this.inner.dimensions }
  async embedQueries(texts: readonly string[]) { return texts.map((t) => this.queries.get(t)!) }
  async embedPassages(texts: readonly string[]) { return texts.map(standIn) }
  health() { return this.inner.health() }
  async close() {}
}

/** Real query vectors, cached under bench/.work/ across runs; and the model's p50 for one question. */
async function queryVectors(model: LocalEmbedder, questions: readonly string[]): Promise<{ table: Map<string, Float32Array>; p50: number }> {
  const table = await cachedQueryVectors(model, questions, WORK)
  const times: number[] = []
  for (const q of questions.slice(0, 200)) {
    const t = performance.now()
    await model.embedQueries([`${q} `])
    times.push(performance.now() - t)
  }
  return { table, p50: pct(times, 50) }
}

interface Service { app: FastifyInstance; dataDir: string; close(): Promise<void> }

/** A service on the embedded stores over a fresh folder, each namespace loaded with its documents. */
async function service(embedder: Embedder, corpora: Record<string, readonly DocumentInput[]>): Promise<Service> {
  const dataDir = await mkdtemp(join(tmpdir(), 'recall-bench-ns-'))
  const config = loadConfig({
    DATA_DIR: dataDir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '0', MAX_EVENT_LOOP_DELAY_MS: '0',
    MAX_IN_FLIGHT: '0', MAX_EMBEDDING_QUEUE: '0', MAX_EMBEDDING_WAIT_MS: '0', CACHE_TTL_SECONDS: '0', EMBEDDING_CACHE_TTL_SECONDS: '0', ...DOCUMENTS_ONLY
  })
  const services = await openServices(config, { providers: (base) => ({ ...base, embedder }) })
  for (const [namespace, docs] of Object.entries(corpora)) {
    for (let i = 0; i < docs.length; i += 2000) await services.writePath.write(namespace, { kind: 'documents', op: 'upsert', documents: docs.slice(i, i + 2000) })
    await (services.lexical.get(namespace) as EmbeddedLexicalIndex).idle()
    console.error(`  ${namespace}: ${docs.length} documents`)
  }
  const app = await buildApp(createRuntime(services), { logger: false })
  await app.ready()
  return { app, dataDir, async close() { await app.close(); await rm(dataDir, { recursive: true, force: true }) } }
}

interface Sample { total: number; vector: number; lexical: number; items: number }

async function ask(app: FastifyInstance, body: object): Promise<Sample> {
  const t = performance.now()
  const r = await app.inject({ method: 'POST', url: '/retrieve', payload: body })
  const total = performance.now() - t
  const answer = r.json() as { legs: { name: string; status: string; took_ms: number }[]; recall_bundle: unknown[] }
  if (r.statusCode !== 200 || answer.legs.some((l) => l.status !== 'ok')) throw new Error(`${r.statusCode}: ${r.body.slice(0, 300)}`)
  const leg = (n: string) => answer.legs.find((l) => l.name === n)!.took_ms
  return { total, vector: leg('vector'), lexical: leg('lexical'), items: answer.recall_bundle.length }
}

function summarise(samples: readonly Sample[]) {
  return {
    requests: samples.length,
    p50_ms: pct(samples.map((s) => s.total), 50),
    p95_ms: pct(samples.map((s) => s.total), 95),
    vector_p50_ms: pct(samples.map((s) => s.vector), 50),
    lexical_p50_ms: pct(samples.map((s) => s.lexical), 50),
    mean_items: r2(samples.reduce((n, s) => n + s.items, 0) / samples.length)
  }
}

/** Each question on every arm in turn, `ROUNDS` times over; the arms' order alternates question by question. */
async function sideBySide(arms: Array<{ app: FastifyInstance; body: (q: string) => object }>, questions: readonly string[]): Promise<Sample[][]> {
  const samples = arms.map(() => [] as Sample[])
  for (const q of questions.slice(0, 20)) for (const arm of arms) await ask(arm.app, arm.body(q)) // warm-up
  let turn = 0
  for (let round = 0; round < ROUNDS; round++) {
    for (const q of questions) {
      const order = turn++ % 2 === 0 ? arms.map((_, i) => i) : arms.map((_, i) => arms.length - 1 - i)
      for (const i of order) samples[i]!.push(await ask(arms[i]!.app, arms[i]!.body(q)))
    }
  }
  return samples
}

async function main(): Promise<void> {
  const loadStart = load()
  const { documents, queries } = await loadCmrc()
  const questions = [...new Set(queries.map((q) => q.query))].filter((q) => q.trim() !== '')
  const model = new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' })
  const { table, p50: embeddingP50 } = await queryVectors(model, questions)
  const embedder = new BenchEmbedder(model, table)
  const total = Math.max(CHUNKS * NAMESPACES, FILTERED)
  const corpus = syntheticDocuments(documents.map((d) => d.text), total, 23)
    .map((d, i) => ({ ...d, metadata: { bucket: i % 100 } }))
  if (corpus.length < total) throw new Error(`only ${corpus.length} synthetic documents`)
  const slice = (k: number) => corpus.slice(k * CHUNKS, (k + 1) * CHUNKS)

  console.error(`1. ${CHUNKS} chunks alone, and in one of ${NAMESPACES} namespaces of ${CHUNKS}`)
  const alone = await service(embedder, { 'tenant-0': slice(0) })
  const shared = await service(embedder, Object.fromEntries(Array.from({ length: NAMESPACES }, (_, k) => [`tenant-${k}`, slice(k)])))
  const load1 = load()
  const [aloneSamples, sharedSamples] = await sideBySide([
    { app: alone.app, body: (q) => ({ mode: 'hybrid', query: q, namespace: 'tenant-0', top_k: 10 }) },
    { app: shared.app, body: (q) => ({ mode: 'hybrid', query: q, namespace: 'tenant-0', top_k: 10 }) }
  ], questions)
  await alone.close()
  await shared.close()
  const namespaces = {
    alone: summarise(aloneSamples!),
    among_namespaces: summarise(sharedSamples!),
    ratio_p50: r2(pct(sharedSamples!.map((s) => s.total), 50) / pct(aloneSamples!.map((s) => s.total), 50)),
    target: 'within 1.2x',
    load_average_during: [load1, load()]
  }
  console.error(JSON.stringify(namespaces))

  console.error(`2. ${FILTERED} chunks, a filter keeping 1% of them`)
  const big = await service(embedder, { default: corpus.slice(0, FILTERED) })
  const load2 = load()
  const [plain, filtered] = await sideBySide([
    { app: big.app, body: (q) => ({ mode: 'hybrid', query: q, top_k: 10 }) },
    { app: big.app, body: (q) => ({ mode: 'hybrid', query: q, top_k: 10, filter: { metadata: { bucket: 7 } } }) }
  ], questions)
  await big.close()
  const filter = {
    unfiltered: summarise(plain!),
    filtered_1_percent: summarise(filtered!),
    ratio_p50: r2(pct(filtered!.map((s) => s.total), 50) / pct(plain!.map((s) => s.total), 50)),
    target: 'within 1.5x',
    kept_chunks: corpus.slice(0, FILTERED).filter((d) => d.metadata.bucket === 7).length,
    load_average_during: [load2, load()]
  }
  console.error(JSON.stringify(filter))
  await model.close()

  const results = {
    generated_by: 'npx tsx bench/namespaces.ts (make bench-namespaces)',
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model, memory_gib: Math.round(totalmem() / 2 ** 30), node: process.version },
    load_average_at_start: loadStart,
    questions: questions.length,
    rounds: ROUNDS,
    query_embedding_p50_ms: embeddingP50,
    includes: 'POST /retrieve through the app (inject), one at a time, caches off; query vectors of the real model from a table ' +
      '(a live embedding adds query_embedding_p50_ms to every arm); bulk chunk vectors from a deterministic stand-in embedder ' +
      '(a unit vector seeded by the text hash); leg times from the answers',
    namespaces: { chunks_per_namespace: CHUNKS, namespaces: NAMESPACES, ...namespaces },
    filter: { chunks: FILTERED, filter: { metadata: { bucket: 7 } }, ...filter }
  }
  await writeFile('bench/results/namespaces.json', `${JSON.stringify(results, null, 2)}\n`)
  console.error('wrote bench/results/namespaces.json')
}

await main()
