/**
 * Issue 19, item 11 (its lexical part): the lexical leg on Qdrant against the embedded index over the same
 * chunks. Writes bench/results/replicas-lexical.json.
 *
 *   nice -n 10 npx tsx bench/replicas.ts [--chunks 10000] [--questions 1000] [--stamped]
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
 * - Qdrant: `QDRANT_URL`, else the 1.18.3 server of ../shared/qdrant/ started for the run (fresh storage).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { EmbeddedLexicalIndex } from '../src/providers/lexical-index/embedded.js'
import { QdrantLexicalIndexes } from '../src/providers/lexical-index/qdrant.js'
import { canStartQdrant, startQdrant, type QdrantServer } from '../test/helpers/qdrant-server.js'
import { loadCmrc } from './lib/cmrc.js'
import { syntheticDocuments } from './lib/synthetic.js'

const { values } = parseArgs({ options: {
  chunks: { type: 'string', default: '10000' }, questions: { type: 'string', default: '1000' }, out: { type: 'string', default: 'replicas-lexical.json' },
  stamped: { type: 'boolean', default: false }
} })
const CHUNKS = Number(values.chunks)
const QUESTIONS = Number(values.questions)

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
  const collection = `bench_replicas_${process.pid}`
  const qdrant = new QdrantLexicalIndexes({
    url, timeoutMs: 60_000, collection, points: 'own', batchSize: 500, ...(values.stamped ? { statisticsStamp: async () => 'bench' } : {})
  })
  const embedded = new EmbeddedLexicalIndex({ dir })
  try {
    const { documents, queries } = await loadCmrc()
    const chunks = syntheticDocuments(documents.map((d) => d.text), CHUNKS).map((d) => ({ id: d.id, text: d.text }))
    const started = performance.now()
    await qdrant.get('default').sync(chunks)
    const qdrantLoadMs = performance.now() - started
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
      const a = await qdrant.get('default').search(q, 10)
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
    await rm(dir, { recursive: true, force: true })
    if (server) await server.stop('SIGTERM', true)
  }
}

await main()
