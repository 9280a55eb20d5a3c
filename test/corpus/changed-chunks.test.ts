/**
 * A changed document re-embeds only the chunks whose embedded text changed (the others keep their stored vectors,
 * read back through `VectorStore.vectorsOf`), and is answered exactly as a fresh ingest of it would be; a document is
 * `unchanged` only when its chunker, analyzer and model versions are the running ones too. The embedder is the real
 * local model, wrapped to record the passages it is given.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DocumentLibrary } from '../../src/corpus/documents/library.js'
import { ingestDocuments } from '../../src/corpus/appliers/writers/documents.js'
import type { DocumentInput } from '../../src/corpus/documents/input.js'
import type { Embedder } from '../../src/providers/embedder/port.js'
import { LocalEmbedder } from '../../src/providers/embedder/local.js'
import { EmbeddedLexicalIndexes } from '../../src/providers/lexical-index/indexes.js'
import { EmbeddedVectorStore } from '../../src/providers/vector-store/embedded.js'
import { modelDir } from '../../bench/lib/corpus.js'
import { encodeChunk } from '../../src/kernel/chunk-payload.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { inTurns } from '../helpers/turns.js'

const model = new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' })
const embedded: string[] = []

/** A real embedder under a name of our choosing, recording every passage it embeds. */
function counting(base: Embedder = model, name = base.model): Embedder {
  return {
    model: name,
    dimensions: base.dimensions,
    embedQueries: (texts, signal) => base.embedQueries(texts, signal),
    embedPassages: (texts) => {
      embedded.push(...texts)
      return base.embedPassages(texts)
    },
    backlog: () => base.backlog?.(),
    health: () => base.health(),
    close: () => base.close()
  }
}

const section = (n: number, body: string) => `## 第${n}节\n\n${body}`
const bodies = [
  '机房每天早上八点由值班员巡检一次，记录温度和湿度。',
  '服务器告警先由一线值班处理，十五分钟无人响应则升级到二线。',
  '备份每天凌晨两点开始，保留三十天，每月抽查一次恢复。',
  '访客进入机房需要提前一天登记，并由员工全程陪同。'
]
const handbook = (texts: readonly string[]): DocumentInput => ({ id: 'ops', text: `# 运维手册\n\n${texts.map((b, i) => section(i + 1, b)).join('\n\n')}` })
const edited = [...bodies]
edited[2] = '备份每天凌晨三点开始，保留九十天，每周抽查一次恢复。'
const other: DocumentInput = { id: 'travel', text: '# 差旅\n\n一线城市住宿每晚不超过六百元，需要提前在系统中申请。' }

describe('re-ingesting a document with one paragraph changed (service, embedded stores)', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({}, (p) => ({ ...p, embedder: counting(p.embedder) }))
  }, 300_000)
  afterAll(async () => t?.close())

  const ingest = async (namespace: string, documents: DocumentInput[]) => {
    const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents } })
    expect(r.statusCode, r.body).toBe(200)
    return r.json() as { chunks: number; replaced: number; unchanged: number }
  }
  const answers = async (namespace: string, query: string) => {
    const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace, query, top_k: 6 } })
    expect(r.statusCode, r.body).toBe(200)
    return (r.json() as { recall_bundle: Array<{ id: string; text: string; score: number; metadata: object }> }).recall_bundle
      .map((i) => ({ id: i.id, text: i.text, score: i.score, metadata: i.metadata }))
  }

  it('embeds exactly the changed section\'s chunk, and answers as a fresh ingest of the new text does', async () => {
    await ingest('edits', [handbook(bodies), other])
    const before = embedded.length
    expect(await ingest('edits', [handbook(edited), other])).toMatchObject({ replaced: 1, unchanged: 1 })
    // the one chunk holding the changed paragraph, under its header; nothing else
    expect(embedded.slice(before)).toHaveLength(1)
    expect(embedded.at(-1)).toContain(edited[2])

    // the fresh ingest embeds every chunk: a bare title joins the first section, so 4 for ops and 1 for travel
    const fresh = embedded.length
    await ingest('fresh', [handbook(edited), other])
    expect(embedded.length - fresh).toBe(5)
    for (const query of ['备份保留多久', '告警没人响应怎么办', '访客怎么进机房', '出差住宿标准', '运维手册']) {
      expect(await answers('edits', query), query).toEqual(await answers('fresh', query))
    }
  })
})

describe('a document is unchanged only under the same chunker, analyzer and model versions', () => {
  const dirs: string[] = []
  beforeAll(async () => { await model.embedQueries(['预热']) }, 120_000)
  afterAll(async () => {
    await model.close()
    for (const d of dirs) await rm(d, { recursive: true, force: true })
  })

  async function open(dir: string, embedder: Embedder) {
    const vectors = new EmbeddedVectorStore({ dir: join(dir, 'vectors') })
    const indexes = new EmbeddedLexicalIndexes({ dir, name: 'bm25' })
    const library = new DocumentLibrary({ vectors, embedder, lexical: indexes }, { collection: 'chunks', namespace: 'default' })
    await library.open()
    return { vectors, library, async close() { await indexes.close(); await vectors.close() } }
  }

  it('stores the versions with each chunk; another model re-embeds every chunk, another chunker version re-indexes without embedding', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-versions-'))
    dirs.push(dir)
    const first = await open(dir, counting())
    await ingestDocuments(first.library, [handbook(bodies)], { exclusive: inTurns() })
    expect(first.library.chunk('ops#0')!.versions).toEqual({ chunker: 'markdown@3', analyzer: 'cjk-bigram@2', model: 'bge-small-zh-v1.5' })
    const again = embedded.length
    expect(await ingestDocuments(first.library, [handbook(bodies)], { exclusive: inTurns() })).toMatchObject({ unchanged: 1, replaced: 0 })
    expect(embedded.length).toBe(again)
    await first.close()

    // the same model files under another model name: its vectors cannot be reused, every chunk is embedded
    const renamed = await open(dir, counting(model, 'bge-small-zh-v1.5-other'))
    const before = embedded.length
    expect(await ingestDocuments(renamed.library, [handbook(bodies)], { exclusive: inTurns() })).toMatchObject({ unchanged: 0, replaced: 1 })
    expect(embedded.length - before).toBe(4)
    expect(renamed.library.chunk('ops#2')!.versions!.model).toBe('bge-small-zh-v1.5-other')
    await renamed.close()

    // chunks as an earlier chunker wrote them (same texts, versions naming that chunker): indexed again, no embedding
    const older = await open(dir, counting(model, 'bge-small-zh-v1.5-other'))
    const stored = ['ops#0', 'ops#1', 'ops#2', 'ops#3'].map((id) => older.library.chunk(id)!)
    const vectors = await older.vectors.vectorsOf('chunks', 'default', stored.map((c) => c.id))
    await older.vectors.write('chunks', 'default', {
      deleteDocIds: ['ops'],
      upsert: stored.map((c) => ({ id: c.id, vector: vectors.get(c.id)!, payload: encodeChunk({ ...c, versions: { ...c.versions!, chunker: 'markdown@1' } }) }))
    })
    await older.close()
    const upgraded = await open(dir, counting(model, 'bge-small-zh-v1.5-other'))
    const start = embedded.length
    expect(await ingestDocuments(upgraded.library, [handbook(bodies)], { exclusive: inTurns() })).toMatchObject({ unchanged: 0, replaced: 1 })
    expect(embedded.length - start).toBe(0)
    expect(upgraded.library.chunk('ops#1')!.versions!.chunker).toBe('markdown@3')
    expect(await ingestDocuments(upgraded.library, [handbook(bodies)], { exclusive: inTurns() })).toMatchObject({ unchanged: 1 })
    await upgraded.close()

    // chunks written before versions were stored: re-indexed and embedded again (their model is not known)
    const legacy = await open(dir, counting(model, 'bge-small-zh-v1.5-other'))
    const held = ['ops#0', 'ops#1', 'ops#2', 'ops#3'].map((id) => legacy.library.chunk(id)!)
    const heldVectors = await legacy.vectors.vectorsOf('chunks', 'default', held.map((c) => c.id))
    await legacy.vectors.write('chunks', 'default', {
      deleteDocIds: ['ops'],
      upsert: held.map(({ versions: _, ...c }) => ({ id: c.id, vector: heldVectors.get(c.id)!, payload: encodeChunk(c) }))
    })
    await legacy.close()
    const reopened = await open(dir, counting(model, 'bge-small-zh-v1.5-other'))
    const from = embedded.length
    expect(await ingestDocuments(reopened.library, [handbook(bodies)], { exclusive: inTurns() })).toMatchObject({ unchanged: 0, replaced: 1 })
    expect(embedded.length - from).toBe(4)
    await reopened.close()
  })
})
