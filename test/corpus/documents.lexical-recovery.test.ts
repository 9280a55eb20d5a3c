import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chunkDocument } from '../../src/corpus/documents/chunking.js'
import { DocumentLibrary } from '../../src/corpus/documents/library.js'
import { ingestDocuments } from '../../src/corpus/appliers/writers/documents.js'
import { LocalEmbedder } from '../../src/providers/embedder/local.js'
import { EmbeddedLexicalIndexes } from '../../src/providers/lexical-index/indexes.js'
import { EmbeddedVectorStore } from '../../src/providers/vector-store/embedded.js'
import { modelDir } from '../../bench/lib/corpus.js'
import { inTurns } from '../helpers/turns.js'

// The vector store is the source of truth: whatever happens to the lexical side after the vectors were
// written, the two legs end up holding the same chunks, in this process or after a restart.
const embedder = new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' })
const dirs: string[] = []
beforeAll(async () => { await embedder.embedQueries(['预热']) })
afterAll(async () => {
  await embedder.close()
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

async function openLibrary(dir: string) {
  const vectors = new EmbeddedVectorStore({ dir: join(dir, 'vectors') })
  // default's index lives in <dir>/bm25
  const indexes = new EmbeddedLexicalIndexes({ dir, name: 'bm25' })
  const library = new DocumentLibrary({ vectors, embedder, lexical: indexes }, { collection: 'chunks', namespace: 'default' })
  await library.open()
  const lexical = indexes.get('default')
  return {
    vectors, lexical, library,
    lexicalIds: async (q: string) => (await lexical.search(q, 100)).map((h) => h.id).sort(),
    async close() { await indexes.close(); await vectors.close() }
  }
}
const doc = (id: string, tag: string) => ({ id, text: `# ${id}\n\n编号 ${tag} 的第一段。\n\n## 二\n\n编号 ${tag} 的第二段。` })

describe('DocumentLibrary keeps the lexical leg in step with the vector store', () => {
  it('re-syncs the lexical index in process when its write fails after the vectors were written', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-lexrec-'))
    dirs.push(dir)
    const s = await openLibrary(dir)
    await ingestDocuments(s.library, [doc('a', 'taga')], { exclusive: inTurns() })
    await s.lexical.idle()
    const manifest = JSON.parse(await readFile(join(dir, 'bm25', 'manifest.json'), 'utf8')) as { nextSegment: number }
    // the lexical write's segment file cannot be created; the re-sync writes the next one
    await mkdir(join(dir, 'bm25', `seg-${manifest.nextSegment}.seg`))
    await ingestDocuments(s.library, [doc('b', 'tagb')], { exclusive: inTurns() })
    expect(await s.lexicalIds('tagb')).toEqual(chunkDocument(doc('b', 'tagb')).map((c) => c.id).sort())
    expect(s.lexical.size).toBe(s.library.chunkCount)
    await s.close()
  })

  it('answers the error when the lexical side cannot be written at all, and a restart reconciles it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-lexrec-'))
    dirs.push(dir)
    const s = await openLibrary(dir)
    await ingestDocuments(s.library, [doc('a', 'taga')], { exclusive: inTurns() })
    await s.lexical.idle()
    // the lexical folder becomes unusable: neither the write nor the re-sync can be saved
    await rm(join(dir, 'bm25'), { recursive: true })
    await writeFile(join(dir, 'bm25'), 'not a folder')
    await expect(ingestDocuments(s.library, [doc('b', 'tagb')], { exclusive: inTurns() })).rejects.toThrow()
    expect(await s.vectors.count('chunks', 'default')).toBe(4) // the vectors were written: they are the truth
    await s.close()
    await rm(join(dir, 'bm25'))
    const again = await openLibrary(dir)
    expect(again.library.has('b')).toBe(true)
    expect(await again.lexicalIds('tagb')).toEqual(chunkDocument(doc('b', 'tagb')).map((c) => c.id).sort())
    await again.close()
  })

  it('after a crash between the two writes, the next start adds, replaces and removes lexical entries to match the vectors', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-lexrec-'))
    dirs.push(dir)
    const s = await openLibrary(dir)
    await ingestDocuments(s.library, [doc('a', 'taga'), doc('b', 'tagb'), doc('c', 'tagc')], { exclusive: inTurns() })
    await s.lexical.idle()
    // what an ingest or delete that died after its vector write leaves behind: vectors changed, BM25 files not
    const [vector] = await embedder.embedPassages(['x'])
    const replaced = chunkDocument(doc('b', 'tagz'))
    await s.vectors.write('chunks', 'default', {
      deleteDocIds: ['a', 'b'],
      upsert: [...replaced, ...chunkDocument(doc('d', 'tagd'))].map((c) => ({
        id: c.id, vector: vector!, payload: { doc_id: c.doc_id, text: c.text, chunk_index: c.chunk_index, source: c.source, ...(c.title ? { title: c.title } : {}) }
      }))
    })
    await s.close()
    const again = await openLibrary(dir)
    expect(await again.lexicalIds('taga')).toEqual([])
    expect(await again.lexicalIds('tagb')).toEqual([])
    expect(await again.lexicalIds('tagz')).toEqual(replaced.map((c) => c.id).sort())
    expect(await again.lexicalIds('tagd')).toHaveLength(2)
    expect(await again.lexicalIds('tagc')).toHaveLength(2)
    expect(again.lexical.size).toBe(await again.vectors.count('chunks', 'default'))
    await again.close()
  })
})
