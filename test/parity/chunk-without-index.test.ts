/**
 * A chunk point whose payload has no `chunk_index` (written by hand, or by a writer that left it out) is the same
 * chunk to every reader: the catalog, the lexical leg on Qdrant (written with the point, or back-filled later) and
 * the hybrid adapter reading a vector hit's payload all take its index from its id, `<doc_id>#<index>`. And every
 * path indexes the same text: the contextual header (the title, which neither chunk holds as a heading line) before
 * each chunk of document g, so a search for 指引 finds both, `g#1` (`咳嗽诊疗指引\n复查血常规`) before the longer
 * `g#0` (BM25 favours the shorter of two texts holding the term once), with the embedded index's scores.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createHybridAdapter } from '../../adapters/hybrid/adapter.js'
import { modelDir } from '../../bench/lib/corpus.js'
import { loadConfig } from '../../src/config.js'
import { DocumentLibrary } from '../../src/corpus/documents/library.js'
import { StoreCorpus } from '../../src/corpus/store-corpus.js'
import { LocalEmbedder } from '../../src/providers/embedder/local.js'
import { EmbeddedLexicalIndexes } from '../../src/providers/lexical-index/indexes.js'
import { backfillLexicalLeg } from '../../src/providers/lexical-index/qdrant-backfill.js'
import { lexicalLegOnQdrant } from '../../src/providers/lexical-index/qdrant-wiring.js'
import type { VectorRecord } from '../../src/providers/vector-store/port.js'
import { QdrantVectorStore } from '../../src/providers/vector-store/qdrant.js'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'

const url = inject('qdrantUrl')
if (!url) console.warn(`chunk-without-index: ${QDRANT_SKIP_LINE}`)

const TITLE = '咳嗽诊疗指引'
// no chunk_index in any payload; the title is in every chunk's payload, as the library writes it
const POINTS = [
  { id: 'g#0', payload: { doc_id: 'g', text: '咳嗽三周以上要做胸片', source: 'g.md', title: TITLE } },
  { id: 'g#1', payload: { doc_id: 'g', text: '复查血常规', source: 'g.md', title: TITLE } },
  { id: 'h#0', payload: { doc_id: 'h', text: '发热先测体温', source: 'h.md' } },
  { id: 'k#0', payload: { doc_id: 'k', text: '夜间告警由二线值班处理', source: 'k.md' } }
]
const QUERIES = ['指引', '咳嗽 体温', '血常规']

describe.skipIf(!url)('a chunk point written without chunk_index', () => {
  const collection = `noindex_${process.pid}_chunks`
  const embedder = new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' })
  // built in beforeAll, not here: vitest runs this body while collecting, also when the suite is skipped
  let leg!: ReturnType<typeof lexicalLegOnQdrant>
  // the service's store writes the lexical leg with every point; the plain one writes points without it
  let service!: QdrantVectorStore
  let plain!: QdrantVectorStore
  const dirs: string[] = []
  let records: VectorRecord[] = []
  beforeAll(async () => {
    leg = lexicalLegOnQdrant(loadConfig({ VECTOR_BACKEND: 'qdrant', QDRANT_URL: url }), collection)
    service = new QdrantVectorStore({ url, timeoutMs: 10_000, sparse: leg.sparse })
    plain = new QdrantVectorStore({ url, timeoutMs: 10_000 })
    const vectors = await embedder.embedPassages(POINTS.map((p) => p.payload.text))
    records = POINTS.map((p, i) => ({ ...p, vector: vectors[i]! }))
    await service.ensureCollection(collection, embedder.dimensions)
  })
  afterAll(async () => {
    await service.dropCollection(collection)
    await service.close()
    await plain.close()
    await embedder.close()
    for (const d of dirs) await rm(d, { recursive: true, force: true })
  })

  /** The catalog's lexical text, in the embedded index a library opened on the namespace fills. */
  async function catalog(namespace: string) {
    const dir = await mkdtemp(join(tmpdir(), 'recall-noindex-'))
    dirs.push(dir)
    const indexes = new EmbeddedLexicalIndexes({ dir, name: 'bm25' })
    const library = new DocumentLibrary({ vectors: plain, embedder, lexical: indexes }, { collection, namespace })
    await library.open()
    const answers = await Promise.all(QUERIES.map((q) => library.lexical.search(q, 10)))
    const chunk = library.chunk('g#1')
    await indexes.close()
    return { answers, chunk }
  }
  const onQdrant = (namespace: string) => Promise.all(QUERIES.map((q) => leg.lexical.get(namespace).search(q, 10)))

  it('is chunk 1 in the catalog, whose lexical text has the title as its header', async () => {
    await plain.write(collection, 'catalog', { upsert: records })
    const { answers, chunk } = await catalog('catalog')
    expect(chunk?.chunk_index).toBe(1)
    expect(answers[0]!.map((h) => h.id)).toEqual(['g#1', 'g#0'])
  })

  it('gets the same lexical text on Qdrant when the service writes it', async () => {
    await service.write(collection, 'written', { upsert: records })
    const onQdrantAnswers = await onQdrant('written')
    expect(onQdrantAnswers[0]!.map((h) => h.id)).toEqual(['g#1', 'g#0'])
    expect(onQdrantAnswers).toEqual((await catalog('written')).answers)
  })

  it('gets the same lexical text on Qdrant when the backfill writes it', async () => {
    await plain.write(collection, 'old', { upsert: records })
    expect(await backfillLexicalLeg(leg.lexical.writer, collection, { namespace: 'old' })).toEqual({ done: 4, total: 4, skipped: 0 })
    const onQdrantAnswers = await onQdrant('old')
    expect(onQdrantAnswers[0]!.map((h) => h.id)).toEqual(['g#1', 'g#0'])
    expect(onQdrantAnswers).toEqual((await catalog('old')).answers)
  })

  it('is chunk 1 in a hybrid answer read from the vector hit\'s payload (no catalog yet)', async () => {
    await plain.write(collection, 'view', { upsert: records })
    const view = new StoreCorpus({ vectors: plain, lexical: leg.lexical }, collection, 'view', POINTS.length)
    const adapter = createHybridAdapter({ vectors: plain, embedder, corpus: () => view })
    const { items } = await adapter.retrieve({ query: '复查血常规', top_k: 4, namespace: 'view', legs: ['vector'] })
    expect(items.map((i) => [i.id, i.metadata.chunk_index]).sort()).toEqual([['g#0', 0], ['g#1', 1], ['h#0', 0], ['k#0', 0]])
  })
})
