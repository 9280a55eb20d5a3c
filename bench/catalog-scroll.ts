/**
 * What a replica's catalog read costs on Qdrant (docs/scale-out-state.md): the whole-namespace scroll of a first
 * read, and the by-document scroll of a catch-up, in the request shapes compared side by side in one run, round
 * by round: every payload field (what the vector store asked for before), or the lexical leg's fields left out
 * (`lex_terms` is every distinct token of the chunk, which the catalog never reads), with pages of 256 or 1,024.
 * Writes bench/results/catalog-scroll.json.
 *
 *   nice -n 10 npx tsx bench/catalog-scroll.ts [--chunks 10000] [--rounds 5]
 *
 * The corpus: `--chunks` one-chunk documents of CMRC 2018 trial text with stand-in passage vectors, written by the
 * document library into a fresh Qdrant 1.18.3 (../shared/qdrant/), with the lexical leg in the same points.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { canStartQdrant, startQdrant } from '../test/helpers/qdrant-server.js'
import { startRedis } from '../test/helpers/redis-server.js'
import { loadCmrc } from './lib/cmrc.js'
import { modelDir } from './lib/corpus.js'
import { preload } from './lib/preload.js'
import { syntheticDocuments } from './lib/synthetic.js'

const { values } = parseArgs({ options: { chunks: { type: 'string', default: '10000' }, rounds: { type: 'string', default: '5' } } })
const CHUNKS = Number(values.chunks)
const ROUNDS = Number(values.rounds)
const r2 = (x: number) => Math.round(x * 100) / 100
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const LEXICAL_FIELDS = ['lex_terms', 'lex_split', 'lex_len', 'lex_aref']
const shapes = {
  'every field, pages of 256': { withPayload: true as unknown, limit: 256 },
  'lexical fields left out, pages of 256': { withPayload: { exclude: LEXICAL_FIELDS }, limit: 256 },
  'lexical fields left out, pages of 1024': { withPayload: { exclude: LEXICAL_FIELDS }, limit: 1024 }
}

/** Every page of `filter`, as the vector store's scroll reads them: ms and bytes of JSON received. */
async function scroll(url: string, collection: string, filter: object, withPayload: unknown, limit: number) {
  const started = performance.now()
  let bytes = 0
  let points = 0
  let offset: unknown
  for (;;) {
    const r = await fetch(`${url}/collections/${collection}/points/scroll`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'accept-encoding': 'identity' },
      body: JSON.stringify({ filter, limit, with_payload: withPayload, with_vector: false, ...(offset !== undefined ? { offset } : {}) })
    })
    const text = await r.text()
    if (r.status !== 200) throw new Error(`scroll answered ${r.status}: ${text.slice(0, 200)}`)
    bytes += Buffer.byteLength(text)
    const page = JSON.parse(text) as { result: { points: unknown[]; next_page_offset?: unknown } }
    points += page.result.points.length
    offset = page.result.next_page_offset
    if (offset === undefined || offset === null) break
  }
  return { ms: performance.now() - started, bytes, points }
}

async function main(): Promise<void> {
  if (!canStartQdrant()) throw new Error('needs ../shared/qdrant/')
  const loadStart = loadavg().map(r2)
  const qdrant = await startQdrant()
  const redis = await startRedis()
  const dir = await mkdtemp(join(tmpdir(), 'recall-bench-catalog-scroll-'))
  const prefix = `bench${process.pid}_`
  try {
    const { documents } = await loadCmrc()
    const corpus = syntheticDocuments(documents.map((d) => d.text), CHUNKS).map((d) => ({ id: d.id, text: d.text }))
    const env = {
      DEMO_DATA: 'false', LOG_LEVEL: 'warn', MODEL_DIR: modelDir(), COLLECTION_PREFIX: prefix, DATA_DIR: join(dir, 'preload'),
      VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrant.url, REDIS_URL: redis.url, REPLICAS: '2', REDIS_COMMAND_TIMEOUT_MS: '1000'
    }
    const loadS = await preload(env, corpus)
    const collection = `${prefix}chunks`
    const namespace = { key: 'namespace', match: { value: 'default' } }
    // a catch-up's read: the documents of 1 and of 20 writes
    const byDocs = (n: number) => ({ must: [namespace, { key: 'doc_id', match: { any: corpus.slice(0, n).map((d) => d.id) } }] })
    const runs: Record<string, Record<string, { ms: number[]; bytes: number; points: number }>> = { whole: {}, 'one document': {}, '20 documents': {} }
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, shape] of Object.entries(shapes)) {
        for (const [what, filter] of [['whole', { must: [namespace] }], ['one document', byDocs(1)], ['20 documents', byDocs(20)]] as const) {
          const r = await scroll(qdrant.url, collection, filter, shape.withPayload, shape.limit)
          const entry = (runs[what]![name] ??= { ms: [], bytes: r.bytes, points: r.points })
          entry.ms.push(r.ms)
        }
      }
    }
    const result = {
      chunks: corpus.length, rounds: ROUNDS, preload_s: r2(loadS),
      reads: Object.fromEntries(Object.entries(runs).map(([what, byShape]) => [what, Object.fromEntries(Object.entries(byShape).map(([name, e]) =>
        [name, { median_ms: r2(median(e.ms)), all_ms: e.ms.map(r2), mib: r2(e.bytes / 2 ** 20), points: e.points }]))])),
      load_average_1_5_15: [loadStart, loadavg().map(r2)],
      at: new Date().toISOString()
    }
    await writeFile(new URL('./results/catalog-scroll.json', import.meta.url), `${JSON.stringify(result, null, 2)}\n`)
    console.log(JSON.stringify(result, null, 2))
  } finally {
    await redis.stop()
    await qdrant.stop('SIGTERM', true)
    await rm(dir, { recursive: true, force: true })
  }
}

await main()
