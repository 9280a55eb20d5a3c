/**
 * The lexical leg on Qdrant (docs/scale-out.md) against the embedded index over the same
 * chunks. Writes bench/results/replicas-lexical.json.
 *
 *   nice -n 10 npx tsx bench/replicas.ts [--chunks 10000] [--questions 1000] [--stamped | --copy [--stamp handed|read]]
 *     [--collection NAME --keep]
 *
 * `--stamped`: the Qdrant index gets a statistics stamp that never moves (no write happens while the questions
 * run), so it reuses N, the lengths and each token's df once read: a read-heavy deployment's steady state. The
 * service's stamp is a Redis read per search (about 0.2 ms, bench/results/scale-out-state.json), not counted here.
 *
 * - Chunks: one-chunk documents of real Chinese text, windows of CMRC 2018 trial sentences
 *   (bench/lib/synthetic.ts), the same in both indexes; one namespace.
 * - Questions: the first `--questions` CMRC trial questions, asked of both indexes in turn (question by
 *   question, so drift on the shared machine falls on both alike), one at a time, top 10.
 * - A time is the port's `search` as the hybrid adapter calls it: analysis, and on Qdrant its round trips
 *   (facets for N, the lengths and the reference lengths, one count per token for df, in parallel; then one
 *   query of the server-ranked candidates per round) and the client-side exact scoring.
 * - Rounds: per question, how many candidate sets it took to prove the top 10 (0: answered from whole posting
 *   lists, the fallback).
 * - Agreement: the share of questions whose top 10 (ids and scores) is identical in both.
 * - `--copy`: the Qdrant index as a replica of the service runs it with its local copy (docs/scale-out.md, "The
 *   local copy"): each search first reads the namespace's hybrid version from a real Redis (the generation store's
 *   script, as the service's stamp does), and answers from the copy because the catalog was read at that version;
 *   `--stamp read` times that Redis read inside the search (a caller that hands no version); `--stamp handed` (the
 *   default) hands the search the version read just before it, untimed, as the hybrid adapter does with the version
 *   its request read before the mode ran (every request reads it, whatever the lexical backend). The copy is fed
 *   the chunks as a catalog read feeds it, and the load waits for it.
 * - Qdrant: `QDRANT_URL`, else the 1.18.3 server of ../shared/qdrant/ started for the run (fresh storage).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Redis } from 'ioredis'
import { Generations } from '../src/generations.js'
import { createGenerationStore } from '../src/providers/generations/index.js'
import { EmbeddedLexicalIndex } from '../src/providers/lexical-index/embedded.js'
import { QdrantLexicalIndexes } from '../src/providers/lexical-index/qdrant.js'
import { canStartQdrant, startQdrant, type QdrantServer } from '../test/helpers/qdrant-server.js'
import { startRedis, type RedisServer } from '../test/helpers/redis-server.js'
import { loadCmrc } from './lib/cmrc.js'
import { syntheticDocuments } from './lib/synthetic.js'

const { values } = parseArgs({ options: {
  chunks: { type: 'string', default: '10000' }, questions: { type: 'string', default: '1000' }, out: { type: 'string', default: 'replicas-lexical.json' },
  stamped: { type: 'boolean', default: false }, copy: { type: 'boolean', default: false }, stamp: { type: 'string', default: 'handed' },
  // a collection kept between runs: loaded only when it does not hold the chunks yet (100k take ~15 min to load)
  collection: { type: 'string' }, keep: { type: 'boolean', default: false }
} })
const CHUNKS = Number(values.chunks)
const QUESTIONS = Number(values.questions)
if (values.stamp !== 'handed' && values.stamp !== 'read') throw new Error('--stamp is handed or read')
const handedStamp = values.copy && values.stamp === 'handed'

const pct = (xs: readonly number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 1000) / 1000
}
const r2 = (x: number) => Math.round(x * 100) / 100
const histogram = (xs: readonly number[]) => {
  const h: Record<string, number> = {}
  for (const x of xs) h[String(x)] = (h[String(x)] ?? 0) + 1
  return h
}

async function main(): Promise<void> {
  let server: QdrantServer | undefined
  let url = process.env.QDRANT_URL
  if (!url) {
    if (!canStartQdrant()) throw new Error('needs QDRANT_URL or ../shared/qdrant/')
    server = await startQdrant()
    url = server.url
  }
  const dir = await mkdtemp(join(tmpdir(), 'recall-bench-replicas-'))
  const collection = values.collection ?? `bench_replicas_${process.pid}`
  let redisServer: RedisServer | undefined
  let redis: Redis | undefined
  let generations: Generations | undefined
  let catalogAt: string | undefined
  if (values.copy) {
    redisServer = await startRedis()
    redis = new Redis(redisServer.url, { lazyConnect: false, maxRetriesPerRequest: 1 })
    generations = new Generations({ store: createGenerationStore({ backend: 'redis', client: redis }), waitMs: 1000, retryAfterSeconds: 1 })
    await generations.recordWrite('default', ['hybrid'])
    catalogAt = (await generations.readState('hybrid', 'default')).version
  }
  const writer = new QdrantLexicalIndexes({
    url, timeoutMs: 60_000, collection, points: 'own', batchSize: 500, ...(values.stamped ? { statisticsStamp: async () => 'bench' } : {})
  })
  // with the copy, the searching side reads points it does not write, as the service's index does
  const qdrant = generations
    ? new QdrantLexicalIndexes({
        url, timeoutMs: 60_000, collection, points: 'vector-store',
        statisticsStamp: async (namespace: string) => (await generations.readState('hybrid', namespace)).version,
        localCopy: { dir: join(dir, 'copy'), complete: (_namespace: string, stamp: string) => stamp === catalogAt }
      })
    : writer
  const embedded = new EmbeddedLexicalIndex({ dir })
  try {
    const { documents, queries } = await loadCmrc()
    const chunks = syntheticDocuments(documents.map((d) => d.text), CHUNKS).map((d) => ({ id: d.id, text: d.text }))
    const started = performance.now()
    const held = await fetch(`${url}/collections/${collection}`).then(async (r) => r.ok ? ((await r.json()) as { result: { points_count: number } }).result.points_count : 0)
    if (held !== chunks.length) await writer.get('default').sync(chunks)
    const qdrantLoadMs = held === chunks.length ? 0 : performance.now() - started
    // the questions are asked in the steady state: once Qdrant's optimizer has indexed what was loaded
    for (let status = ''; status !== 'green'; await new Promise((r) => setTimeout(r, 1000))) {
      status = await fetch(`${url}/collections/${collection}`).then(async (r) => ((await r.json()) as { result: { status: string } }).result.status)
    }
    let copyBuildMs: number | undefined
    if (values.copy) {
      // what the shared catalog's first read of the namespace hands the index: a whole sync
      const t = performance.now()
      await qdrant.get('default').sync(chunks)
      await qdrant.get('default').localCopyIdle()
      copyBuildMs = performance.now() - t
      if (!qdrant.get('default').localCopyReady) throw new Error('the local copy is not ready after its sync')
    }
    await embedded.sync(chunks)
    await embedded.idle()
    const asked = queries.slice(0, QUESTIONS).map((q) => q.query)
    const index = qdrant.get('default')
    // warm both (first searches load segments and open connections)
    for (const q of asked.slice(0, 20)) {
      await qdrant.get('default').search(q, 10)
      await embedded.search(q, 10)
    }
    index.recordRounds = true
    index.rounds.length = 0
    const onQdrant: number[] = []
    const inProcess: number[] = []

    let same = 0
    const differing: string[] = []
    for (const q of asked) {
      let t = performance.now()
      // --stamp handed: the version this question's request read before its mode ran, outside the leg's time
      const stamp = handedStamp ? (await generations!.readState('hybrid', 'default')).version! : undefined
      t = performance.now()
      const a = await qdrant.get('default').search(q, 10, stamp !== undefined ? { stamp } : {})
      onQdrant.push(performance.now() - t)
      t = performance.now()
      const b = await embedded.search(q, 10)
      inProcess.push(performance.now() - t)
      if (JSON.stringify(a) === JSON.stringify(b)) same += 1
      else if (differing.length < 5) differing.push(q)
    }
    const result = {
      chunks: chunks.length,
      questions: asked.length,
      stamped: values.stamped,
      local_copy: values.copy ? {
        build_s: r2(copyBuildMs! / 1000),
        memory_mib: r2(qdrant.get('default').localCopyBytes / 2 ** 20),
        embedded_index_memory_mib: r2(embedded.memoryBytes / 2 ** 20),
        stamp: handedStamp ? 'handed: the version the request read (from a real Redis) before the leg, not timed' : 'read from a real Redis by each search, timed'
      } : false,
      qdrant: { version: '1.18.3', url: server ? 'started from ../shared/qdrant' : 'QDRANT_URL', load_s: r2(qdrantLoadMs / 1000) },
      lexical_qdrant_ms: { median: pct(onQdrant, 50), p99: pct(onQdrant, 99) },
      lexical_embedded_ms: { median: pct(inProcess, 50), p99: pct(inProcess, 99) },

      ratio: { median: r2(pct(onQdrant, 50) / pct(inProcess, 50)), p99: r2(pct(onQdrant, 99) / pct(inProcess, 99)) },
      top10_agreement: same / asked.length,
      rounds_histogram: histogram(index.rounds),
      differing_questions: differing,
      machine: { cpus: cpus().length, loadavg: loadavg().map(r2) },
      when: new Date().toISOString()
    }
    console.log(JSON.stringify(result, null, 2))
    await writeFile(new URL(values.out!, new URL('./results/', import.meta.url)), `${JSON.stringify(result, null, 2)}\n`)
  } finally {
    await embedded.close()
    await qdrant.close()
    await writer.close()
    await generations?.close()
    redis?.disconnect()
    await redisServer?.stop()
    await rm(dir, { recursive: true, force: true })
    if (!values.keep) await fetch(`${url}/collections/${collection}`, { method: 'DELETE' }).catch(() => undefined)
    if (server) await server.stop('SIGTERM', true)
  }
}

await main()
