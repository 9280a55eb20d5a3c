/**
 * The suite run by lexical-qdrant-parity.test.ts (one server) and lexical-qdrant-cluster-parity.test.ts (a
 * sharded, replicated cluster). The lexical leg on Qdrant (docs/scale-out.md) ranks exactly as the embedded index over the same namespace
 * contents. Namespace `cmrc` holds the CMRC 2018 trial paragraphs; namespace `other` holds another corpus built
 * from the same sentences (so that it shares most of the vocabulary, and any leak of its statistics would change
 * scores); then 20% of `cmrc`'s documents are deleted or re-ingested with other text. The top 10 of every CMRC
 * question, ids and scores, must equal the embedded index's over the final `cmrc` chunks.
 *
 * The points are written as the service writes them (QdrantVectorStore with the lexical leg attached, then the
 * lexical index's write); their dense vectors are fixed per text, since the lexical leg never reads them.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { loadCmrc } from '../../bench/lib/cmrc.js'
import { syntheticDocuments } from '../../bench/lib/synthetic.js'
import { loadConfig } from '../../src/config.js'
import { chunkDocument } from '../../src/corpus/documents/chunking.js'
import type { DocumentInput } from '../../src/corpus/documents/input.js'
import { encodeChunk, type ChunkRecord } from '../../src/kernel/chunk-payload.js'
import { lexicalText } from '../../src/kernel/lexical-text.js'
import { EmbeddedLexicalIndex } from '../../src/providers/lexical-index/embedded.js'
import { lexicalLegOnQdrant } from '../../src/providers/lexical-index/qdrant-wiring.js'
import { contentHash } from '../../src/providers/lexical-index/segment.js'
import { QdrantVectorStore } from '../../src/providers/vector-store/qdrant.js'
import { CMRC_TRIAL, describeWith } from '../helpers/reference-data.js'

/** Where the suite runs: a Qdrant to start (or the run's), and the cluster settings of its collection. */
export interface ParityTarget {
  /** Why the suite cannot run here, printed; undefined when it can. */
  skip: string | undefined
  start(): Promise<{ url: string; close(): Promise<void> }>
  /** The environment's Qdrant settings (QDRANT_SHARD_NUMBER, …): the collection is created with them. */
  env?: Record<string, string>
  /** What the collection's `config.params` must then hold (e.g. `shard_number`), and whether each shard must end up holding points. */
  params?: Record<string, number>
  /** How many of the CMRC questions are asked (the first ones); default all. A cluster answers each more slowly. */
  questions?: number
}

const DIM = 8
function fixedVector(text: string): Float32Array {
  const [a, b] = contentHash(text)
  const v = Float32Array.from({ length: DIM }, (_, i) => ((Math.imul(a ^ (i * 0x9e3779b1), b | 1) >>> 0) / 2 ** 32) - 0.5)
  const norm = Math.hypot(...v)
  return v.map((x) => x / norm)
}

export function lexicalParitySuite(title: string, target: ParityTarget): void {
describeWith(CMRC_TRIAL).skipIf(target.skip !== undefined)(title, () => {
  const collection = `parity_${process.pid}_chunks`
  let server: { url: string; close(): Promise<void> } | undefined
  const dirs: string[] = []
  // built before the test, not as the suite is collected: a skipped suite is collected too, with no QDRANT_URL
  let leg: ReturnType<typeof lexicalLegOnQdrant>
  /** The namespaces' stamp of their lexical contents; none (nothing reused) until the writes are done. */
  let stamp: string | undefined
  let vectors: QdrantVectorStore
  let embedded: EmbeddedLexicalIndex | undefined
  beforeAll(async () => {
    server = await target.start()
    const config = loadConfig({ VECTOR_BACKEND: 'qdrant', QDRANT_URL: server.url, LEXICAL_TIMEOUT_MS: '30000', ...target.env })
    if (config.vector.backend !== 'qdrant') throw new Error('unreachable')
    leg = lexicalLegOnQdrant(config, collection, {
      statisticsStamp: async (namespace) => (stamp === undefined ? undefined : `${stamp}-${namespace}`)
    })
    vectors = new QdrantVectorStore({ url: server.url, timeoutMs: 30_000, sparse: leg.sparse, cluster: config.vector.cluster })
  })
  afterAll(async () => {
    await embedded?.close()
    await vectors?.dropCollection(collection)
    await server?.close()
    for (const d of dirs) await rm(d, { recursive: true, force: true })
  })


  /** The library's write: the documents' old chunks go, their new chunks (both legs in each point) come. */
  async function ingest(namespace: string, documents: readonly DocumentInput[]): Promise<ChunkRecord[]> {
    const chunks = documents.flatMap(chunkDocument)
    await vectors.write(collection, namespace, {
      deleteDocIds: documents.map((d) => d.id),
      upsert: chunks.map((c) => ({
        id: c.id, vector: fixedVector(c.text),
        payload: encodeChunk(c)
      }))
    })
    await leg.lexical.get(namespace).write({ upsert: chunks.map((c) => ({ id: c.id, text: lexicalText(c) })) })
    return chunks
  }

  it('gives the same top 10, ids and scores, for every CMRC question', async () => {
    const { documents, queries: all } = await loadCmrc()
    const queries = all.slice(0, target.questions ?? all.length)
    await vectors.ensureCollection(collection, DIM)
    if (target.params) {
      const info = await (await fetch(`${server!.url}/collections/${collection}`)).json() as { result: { config: { params: Record<string, unknown> } } }
      expect(info.result.config.params).toMatchObject(target.params)
    }
    await leg.lexical.get('cmrc').sync([])
    const held = new Map<string, ChunkRecord[]>()
    for (let i = 0; i < documents.length; i += 64) {
      const batch = documents.slice(i, i + 64)
      const chunks = await ingest('cmrc', batch)
      for (const d of batch) held.set(d.id, chunks.filter((c) => c.doc_id === d.id))
    }
    const other = syntheticDocuments(documents.map((d) => d.text), 600).map((d) => ({ ...d, id: `other-${d.id}` }))
    for (let i = 0; i < other.length; i += 100) await ingest('other', other.slice(i, i + 100))
    // every 5th document: deleted (even turns) or re-ingested with its second half only (odd turns)
    let turn = 0
    for (let i = 0; i < documents.length; i += 5, turn++) {
      const d = documents[i]!
      if (turn % 2 === 0) {
        await vectors.write(collection, 'cmrc', { deleteDocIds: [d.id] })
        await leg.lexical.get('cmrc').write({ delete: held.get(d.id)!.map((c) => c.id) })
        held.delete(d.id)
      } else {
        const changed = { ...d, text: d.text.slice(Math.floor(d.text.length / 2)) }
        const chunks = await ingest('cmrc', [changed])
        held.set(d.id, chunks)
      }
    }
    const finalChunks = [...held.values()].flat()
    if (target.params?.shard_number !== undefined) {
      // the namespace is spread over every shard: each one's statistics are only a part of the whole
      const cluster = await (await fetch(`${server!.url}/collections/${collection}/cluster`)).json() as {
        result: { local_shards: { shard_id: number; points_count: number }[] }
      }
      expect(cluster.result.local_shards.every((shard) => shard.points_count > 0), JSON.stringify(cluster.result)).toBe(true)
    }
    expect(leg.lexical.get('cmrc').size).toBe(finalChunks.length)

    const dir = await mkdtemp(join(tmpdir(), 'recall-parity-'))
    dirs.push(dir)
    embedded = new EmbeddedLexicalIndex({ dir })
    await embedded.sync(finalChunks.map((c) => ({ id: c.id, text: lexicalText(c) })))

    const differing: string[] = []
    let compared = 0
    for (const q of queries) {
      const [onQdrant, inProcess] = await Promise.all([leg.lexical.get('cmrc').search(q.query, 10), embedded.search(q.query, 10)])
      compared += 1
      if (JSON.stringify(onQdrant) !== JSON.stringify(inProcess)) differing.push(`${q.query}: ${JSON.stringify(onQdrant)} vs ${JSON.stringify(inProcess)}`)
    }
    expect(compared).toBe(target.questions ?? all.length)
    expect(compared).toBeGreaterThan(200)
    expect(differing.slice(0, 3)).toEqual([])
    // With a stamp that stands (no write from here on), the statistics and each token's df are read once and
    // reused: every question, asked twice, still gives the embedded index's top 10
    stamp = 'after'
    for (const pass of [1, 2]) {
      for (const q of queries.slice(0, Math.min(300, Math.floor(queries.length / 3)))) {
        const [onQdrant, inProcess] = await Promise.all([leg.lexical.get('cmrc').search(q.query, 10), embedded.search(q.query, 10)])
        if (JSON.stringify(onQdrant) !== JSON.stringify(inProcess)) differing.push(`stamped pass ${pass}, ${q.query}: ${JSON.stringify(onQdrant)} vs ${JSON.stringify(inProcess)}`)
      }
    }
    expect(differing.slice(0, 3)).toEqual([])
    // and the other namespace's statistics did count there: the same question scores otherwise in `other`
    const q = queries[0]!.query
    expect(await leg.lexical.get('other').search(q, 10)).not.toEqual(await leg.lexical.get('cmrc').search(q, 10))
  }, 600_000)
})
}
