/**
 * The server-side ranking on Qdrant stays exact when the reference lengths its weights were written
 * with are stale (docs/scale-out.md, "Ranking on the server"). Short documents are written first, then many
 * much longer ones, so that every point's `lex_aref` is far below the true average length; the expected
 * top 10 of every query (ids and scores) is the embedded index's over the same documents.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { QdrantClient } from '@qdrant/js-client-rest'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { seededRandom } from '../../src/evaluation/statistics.js'
import { EmbeddedLexicalIndex } from '../../src/providers/lexical-index/embedded.js'
import { QdrantLexicalIndexes } from '../../src/providers/lexical-index/qdrant.js'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'

const url = inject('qdrantUrl')
if (!url) console.warn(`lexical-index.qdrant-bound: ${QDRANT_SKIP_LINE}`)

/** Documents of words w0..w399 drawn Zipf-like (word i with weight 1/(i+1)), lengths in [min, max]. */
function corpus(prefix: string, count: number, min: number, max: number, seed: number) {
  const random = seededRandom(seed)
  const weights = Array.from({ length: 400 }, (_, i) => 1 / (i + 1))
  const total = weights.reduce((a, b) => a + b, 0)
  const word = () => {
    let x = random() * total
    for (let i = 0; i < weights.length; i++) if ((x -= weights[i]!) <= 0) return `w${i}`
    return 'w399'
  }
  return Array.from({ length: count }, (_, i) => {
    const length = min + Math.floor(random() * (max - min + 1))
    return { id: `${prefix}-${String(i).padStart(4, '0')}`, text: Array.from({ length }, word).join(' ') }
  })
}

describe.skipIf(!url)('server-side ranking with stale reference lengths, on a real Qdrant', () => {
  const collection = `lex_bound_${process.pid}`
  const dirs: string[] = []
  let embedded: EmbeddedLexicalIndex | undefined
  afterAll(async () => {
    await embedded?.close()
    await new QdrantClient({ url, checkCompatibility: false }).deleteCollection(collection).catch(() => undefined)
    for (const d of dirs) await rm(d, { recursive: true, force: true })
  })

  it('ranks exactly as the embedded index, through the bound and through the widening', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-lex-bound-'))
    dirs.push(dir)
    embedded = new EmbeddedLexicalIndex({ dir })
    // a probe of 16 postings: most query words are frequent, counted apart, and ranked first by an upper bound of their idf
    const qdrant = new QdrantLexicalIndexes({ url, timeoutMs: 30_000, collection, points: 'own', batchSize: 200, dfProbe: 16 })
    const index = qdrant.get('default')
    const short = corpus('s', 300, 2, 6, 11)
    const long = corpus('l', 300, 40, 90, 12)
    await index.write({ upsert: short })
    await index.write({ upsert: long })
    await embedded.write({ upsert: short })
    await embedded.write({ upsert: long })

    // the stored reference lengths are the short documents' average, far below the true one
    const client = new QdrantClient({ url, checkCompatibility: false })
    const { hits } = await client.facet(collection, { key: 'lex_aref', exact: true, limit: 100 })
    const trueAverage = [...short, ...long].reduce((n, d) => n + d.text.split(' ').length, 0) / 600
    expect(hits.map((h) => Number(h.value))).toEqual([4])
    expect(trueAverage).toBeGreaterThan(30)

    const random = seededRandom(13)
    const queries = Array.from({ length: 60 }, (_, i) => {
      const words = 1 + (i % 5)
      return Array.from({ length: words }, () => `w${Math.floor(random() * random() * 400)}`).join(' ')
    })
    index.recordRounds = true
    for (const q of queries) expect(await index.search(q, 10), q).toEqual(await embedded.search(q, 10))
    // a filter that keeps one document in 7: candidates are widened, or whole lists read
    const filter = (id: string) => Number(id.slice(2)) % 7 === 0
    for (const q of queries.slice(0, 20)) expect(await index.search(q, 10, { filter }), q).toEqual(await embedded.search(q, 10, { filter }))
    // the server's ranking answered most searches (not only the fallback), some of them after widening
    const served = index.rounds.filter((r) => r >= 1).length
    expect(served).toBeGreaterThan(index.rounds.length / 2)
    expect(index.rounds.some((r) => r >= 2)).toBe(true)

    // deleting every short document: the true average grows further past the stored references
    await index.write({ delete: short.map((d) => d.id) })
    await embedded.write({ delete: short.map((d) => d.id) })
    for (const q of queries.slice(0, 30)) expect(await index.search(q, 5), q).toEqual(await embedded.search(q, 5))
  })
})
