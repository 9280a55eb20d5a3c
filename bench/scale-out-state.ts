/**
 * What the scale-out state costs a replica (docs/scale-out-state.md): one generation-store read (the Redis
 * script every read runs for its generation and cache version), and one catalog re-read of a namespace from
 * Qdrant (payload scroll + lexical re-sync) at several corpus sizes, against the catch-up after one write of
 * one document through the change log (log read + that document's chunks + lexical update). Needs QDRANT_URL
 * and REDIS_URL. `BENCH_DIMENSIONS` (default 512) shrinks the synthetic vectors for the largest sizes.
 *
 *   QDRANT_URL=http://127.0.0.1:6333 REDIS_URL=redis://127.0.0.1:6379 nice -n 10 npx tsx bench/scale-out-state.ts 1000,5000
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DocumentLibraries } from '../src/corpus/libraries.js'
import { SharedCatalog } from '../src/corpus/shared-catalog.js'
import type { Embedder } from '../src/providers/embedder/port.js'
import { RedisGenerationStore } from '../src/providers/generations/redis.js'
import { createRedisClient } from '../src/providers/cache/redis.js'
import { createLexicalIndexes } from '../src/providers/lexical-index/index.js'
import { createVectorStore } from '../src/providers/vector-store/index.js'

const qdrantUrl = process.env.QDRANT_URL
const redisUrl = process.env.REDIS_URL
if (!qdrantUrl || !redisUrl) throw new Error('set QDRANT_URL and REDIS_URL')
const sizes = (process.argv[2] ?? '1000,5000').split(',').map(Number)
const DIMENSIONS = Number(process.env.BENCH_DIMENSIONS ?? 512)

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
const round = (x: number) => Math.round(x * 100) / 100

async function generationReads(): Promise<{ calls: number; p50_ms: number; p99_ms: number }> {
  const client = createRedisClient(redisUrl!, { commandTimeoutMs: 1000 })
  client.on('error', () => undefined)
  await new Promise((resolve) => client.once('ready', resolve))
  const store = new RedisGenerationStore({ client, keyPrefix: `bench:generations:${Date.now()}:` })
  await store.recordWrite('default', ['hybrid'])
  const times: number[] = []
  for (let i = 0; i < 2000; i++) {
    const started = performance.now()
    await store.read('default')
    times.push(performance.now() - started)
  }
  client.disconnect()
  times.sort((a, b) => a - b)
  return { calls: times.length, p50_ms: round(quantile(times, 0.5)), p99_ms: round(quantile(times, 0.99)) }
}

interface CatchUp { chunks: number; documents: number; open_ms: number; reread_ms: number; change_log_catch_up_ms: number[]; change_log_median_ms: number; one_document_scroll_median_ms: number }

const unit = () => {
  const vector = new Float32Array(DIMENSIONS).map(() => Math.random() - 0.5)
  const norm = Math.hypot(...vector)
  return vector.map((x) => x / norm)
}

async function catalogReread(chunks: number): Promise<CatchUp> {
  const dir = await mkdtemp(join(tmpdir(), 'recall-bench-'))
  const collection = `bench_${Date.now()}_chunks`
  const vectors = createVectorStore({ backend: 'qdrant', url: qdrantUrl!, timeoutMs: 30_000, writeTimeoutMs: 120_000 })
  try {
    await vectors.ensureCollection(collection, DIMENSIONS)
    const perDoc = 4
    const records = Array.from({ length: chunks }, (_, i) => {
      const vector = new Float32Array(DIMENSIONS).map(() => Math.random() - 0.5)
      const norm = Math.hypot(...vector)
      const doc = `doc-${Math.floor(i / perDoc)}`
      return {
        id: `${doc}#${i % perDoc}`, vector: vector.map((x) => x / norm),
        payload: { doc_id: doc, text: `文档 ${doc} 的第 ${i % perDoc} 段，夜间告警由二线值班处理，编号 ${i}。`, chunk_index: i % perDoc, source: `bench/${doc}.md` }
      }
    })
    for (let i = 0; i < records.length; i += 1000) await vectors.write(collection, 'default', { upsert: records.slice(i, i + 1000) })
    // A replica that has read the namespace once (start-up), then re-reads it as after another replica's write.
    const embedder = { dimensions: DIMENSIONS, model: 'none' } as Embedder
    const libraries = new DocumentLibraries({ vectors, embedder, lexical: createLexicalIndexes({ dir: join(dir, 'bm25'), name: 'chunks' }) }, { collection })
    const opening = performance.now()
    await libraries.open()
    const openMs = performance.now() - opening
    const started = performance.now()
    await libraries.refresh('default')
    const rereadMs = performance.now() - started
    // The change log: another replica writes one document (4 chunks) and records it; this one catches up.
    const client = createRedisClient(redisUrl!, { commandTimeoutMs: 1000 })
    client.on('error', () => undefined)
    await new Promise((resolve) => client.once('ready', resolve))
    const store = new RedisGenerationStore({ client, keyPrefix: `bench:generations:${Date.now()}:` })
    const catalog = new SharedCatalog(libraries, { changes: store })
    const version = async () => (await store.read('default')).versions.hybrid
    await store.recordWrite('default', ['hybrid'], { docIds: ['doc-0'] })
    await catalog.catchUp('default', await version()) // the first catch-up reads the namespace (no position yet)
    const times: number[] = []
    for (let round_ = 0; round_ < 7; round_++) {
      const doc = `doc-${round_}`
      const upsert = Array.from({ length: perDoc }, (_, c) => ({
        id: `${doc}#${c}`, vector: unit(),
        payload: { doc_id: doc, text: `文档 ${doc} 第 ${c} 段改写于第 ${round_} 轮，白班告警由一线处理。`, chunk_index: c, source: `bench/${doc}.md` }
      }))
      await vectors.write(collection, 'default', { deleteDocIds: [doc], upsert })
      await store.recordWrite('default', ['hybrid'], { docIds: [doc] })
      const v = await version()
      const t0 = performance.now()
      await catalog.catchUp('default', v)
      times.push(performance.now() - t0)
      if (catalog.lastCatchUp.get('default')?.kind !== 'documents') throw new Error('the catch-up did not use the change log')
      if (!libraries.get('default')!.chunk(`${doc}#0`)!.text.includes(`第 ${round_} 轮`)) throw new Error('the catch-up missed the write')
    }
    client.disconnect()
    // of which: reading one document's chunks from Qdrant (the scroll filtered by doc_id)
    const scrolls: number[] = []
    for (let i = 0; i < 7; i++) {
      const t0 = performance.now()
      for await (const _ of vectors.scroll(collection, 'default', [`doc-${i}`])) { /* drain */ }
      scrolls.push(performance.now() - t0)
    }
    scrolls.sort((x, y) => x - y)
    const sorted = [...times].sort((x, y) => x - y)
    return {
      chunks, documents: libraries.get('default')!.documentCount, open_ms: round(openMs), reread_ms: round(rereadMs),
      change_log_catch_up_ms: times.map(round), change_log_median_ms: round(quantile(sorted, 0.5)),
      one_document_scroll_median_ms: round(quantile(scrolls, 0.5))
    }
  } finally {
    await vectors.dropCollection(collection).catch(() => undefined)
    await vectors.close()
    await rm(dir, { recursive: true, force: true })
  }
}

const results = { generation_store_read: await generationReads(), catalog_reread: [] as CatchUp[] }
for (const n of sizes) {
  results.catalog_reread.push(await catalogReread(n))
  console.error(JSON.stringify(results.catalog_reread.at(-1)))
}
const out = { ...results, sizes, measured_at: new Date().toISOString(), machine: '2 cores shared with other jobs', dimensions: DIMENSIONS, command: `BENCH_DIMENSIONS=${DIMENSIONS} npx tsx bench/scale-out-state.ts ${sizes.join(',')}` }
await mkdir('bench/results', { recursive: true })
await writeFile('bench/results/scale-out-state.json', `${JSON.stringify(out, null, 2)}\n`)
console.log(JSON.stringify(out, null, 2))
