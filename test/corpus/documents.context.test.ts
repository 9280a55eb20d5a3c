import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DocumentLibrary } from '../../src/corpus/documents/library.js'
import { ingestDocuments } from '../../src/corpus/appliers/writers/documents.js'
import { LocalEmbedder } from '../../src/providers/embedder/local.js'
import { EmbeddedLexicalIndexes } from '../../src/providers/lexical-index/indexes.js'
import { EmbeddedVectorStore } from '../../src/providers/vector-store/embedded.js'
import { modelDir } from '../../bench/lib/corpus.js'
import { inTurns } from '../helpers/turns.js'

const embedder = new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' })
const dirs: string[] = []
beforeAll(async () => { await embedder.embedQueries(['预热']) })
afterAll(async () => {
  await embedder.close()
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

async function openLibrary(dir: string) {
  const vectors = new EmbeddedVectorStore({ dir: join(dir, 'vectors') })
  const indexes = new EmbeddedLexicalIndexes({ dir, name: 'bm25' })
  const library = new DocumentLibrary({ vectors, embedder, lexical: indexes }, { collection: 'chunks', namespace: 'default' })
  await library.open()
  return { vectors, library, lexical: indexes.get('default'), async close() { await indexes.close(); await vectors.close() } }
}

// Chunk 1 is the section's continuation: it names neither the document nor its section.
const sentences = Array.from({ length: 30 }, (_, i) => `第${i}句说明依赖变化时结果要重新求值的情形。`).join('')
const text = `# 计算属性 {#computed}\n\n## 缓存失效 {#invalidation}\n\n${sentences}`

describe('DocumentLibrary indexes each chunk under its contextual header and keeps its context in the payload', () => {
  it('stores heading path and anchor, gives callers the chunk alone, and embeds and indexes the header with it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-context-'))
    dirs.push(dir)
    const first = await openLibrary(dir)
    await ingestDocuments(first.library, [{ id: 'vue', text }], { exclusive: inTurns() })
    await first.close()

    const s = await openLibrary(dir)
    const c1 = s.library.chunk('vue#1')!
    expect(c1.heading_path).toEqual(['计算属性', '缓存失效'])
    expect(c1.anchor).toBe('invalidation')
    expect(c1.title).toBe('计算属性')
    expect(c1.text.startsWith('第')).toBe(true)
    expect(s.library.chunk('vue#0')!.text.startsWith('# 计算属性\n\n## 缓存失效\n\n第0句')).toBe(true)

    // the stored vector is the header's and the chunk's, not the chunk's alone
    const [withHeader, alone] = await Promise.all([
      embedder.embedPassages([`计算属性 > 缓存失效\n${c1.text}`]), embedder.embedPassages([c1.text])
    ])
    const hitWith = (await s.vectors.search('chunks', 'default', withHeader[0]!, 1))[0]!
    const hitAlone = (await s.vectors.search('chunks', 'default', alone[0]!, 2)).find((h) => h.id === 'vue#1')!
    expect(hitWith.id).toBe('vue#1')
    expect(hitWith.score).toBeGreaterThan(0.99)
    expect(hitAlone.score).toBeLessThan(hitWith.score)

    // the section's name is found in the continuation chunk through its header only
    expect((await s.lexical.search('缓存失效', 10)).map((h) => h.id)).toContain('vue#1')
    await s.close()
  }, 120_000)
})
