import { mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deleteDocument, dropDocuments, ingestDocuments } from '../../src/corpus/appliers/writers/documents.js'
import { STATE } from '../../src/corpus/documents/library-state.js'
import { DocumentLibraries } from '../../src/corpus/libraries.js'
import { LocalEmbedder } from '../../src/providers/embedder/local.js'
import { EmbeddedLexicalIndexes } from '../../src/providers/lexical-index/indexes.js'
import { EmbeddedVectorStore } from '../../src/providers/vector-store/embedded.js'
import { modelDir } from '../../bench/lib/corpus.js'
import { inTurns } from '../helpers/turns.js'

// The catalog's checkpoint (src/corpus/documents/catalog-checkpoint.ts) is a copy of what a scroll of the vector store
// gives: a library opened from it holds the same catalog, in the same order, as one opened by a scroll of the same
// folder (the independent reading), and a file that is missing, cut short, damaged, of another format or stale is not
// used (the library scrolls, and holds the same catalog again).
const embedder = new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' })
const dirs: string[] = []
beforeAll(async () => { await embedder.embedQueries(['预热']) })
afterAll(async () => {
  await embedder.close()
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

const NAMESPACES = ['default', 'tenant-a']

/** The service's stores over `dir`; with `checkpoints`, the catalogs are kept in `dir/catalog` as the service keeps them. */
async function open(dir: string, checkpoints = true, watch?: (lexical: EmbeddedLexicalIndexes) => void) {
  const vectors = new EmbeddedVectorStore({ dir: join(dir, 'vectors') })
  const lexical = new EmbeddedLexicalIndexes({ dir: join(dir, 'bm25'), name: 'chunks' })
  watch?.(lexical)
  const libraries = new DocumentLibraries({ vectors, embedder, lexical }, { collection: 'chunks', ...(checkpoints ? { checkpointDir: join(dir, 'catalog') } : {}) })
  await libraries.open()
  return {
    libraries,
    library: (namespace = 'default') => libraries.forWrite(namespace),
    /** Everything a reader can see of each namespace, in the catalog's own order (what lexical syncs and reads walk). */
    async held() {
      const out: Record<string, unknown> = {}
      for (const namespace of NAMESPACES) {
        const library = libraries.get(namespace)
        out[namespace] = library && {
          chunks: [...library[STATE].catalog.values()], documents: library.list(), docs: [...library[STATE].docs.values()],
          page: library.page('b', 2), lexical: (await lexical.get(namespace).search('编号 第二段 标题', 50)).map((h) => [h.id, h.score])
        }
      }
      return out
    },
    async close() { await libraries.checkpoint(); await lexical.close(); await vectors.close() },
    /** Stops as a killed process would: the catalogs are not kept. */
    async kill() { await lexical.close(); await vectors.close() }
  }
}

const doc = (id: string, tag: string, extra: Record<string, unknown> = {}) => ({
  id, text: `# 标题 ${id}\n\n编号 ${tag} 的第一段。\n\n## 二\n\n编号 ${tag} 的第二段。\n\n### 三\n\n编号 ${tag} 的第三段。`, ...extra
})

/** A folder whose two namespaces were written, replaced and deleted in, then stopped cleanly (catalogs kept). */
async function writtenFolder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'recall-catalog-ckpt-'))
  dirs.push(dir)
  const s = await open(dir)
  const library = await s.library()
  await ingestDocuments(library, [
    doc('b', 'tagb', { title: '乙', source: 'notes/b.md', metadata: { lang: 'zh', year: 2024 } }),
    doc('a', 'taga'), doc('c', 'tagc'), doc('d#e', 'tagd'), doc('f', 'tagf')
  ], { exclusive: inTurns() })
  // replaced with other text and metadata, one deleted: the catalog the writers hold is not the one a scroll builds
  await ingestDocuments(library, [doc('a', 'taga2', { metadata: { tags: ['x', 'y'] } })], { exclusive: inTurns() })
  await deleteDocument(library, 'c', inTurns())
  await ingestDocuments(await s.library('tenant-a'), [doc('z', 'tagz'), doc('y', 'tagy')], { exclusive: inTurns() })
  await s.close()
  return dir
}

/** What a scroll of the folder gives (no checkpoint read or written), the reference every case compares with. */
async function scrolled(dir: string) {
  const s = await open(dir, false)
  const held = await s.held()
  await s.kill()
  return held
}

/** Opens the folder with checkpoints and answers where each namespace's catalog came from and what it holds. */
async function reopened(dir: string) {
  const s = await open(dir)
  const result = { from: Object.fromEntries(s.libraries.openedFrom), held: await s.held() }
  await s.kill()
  return result
}

const catalogFile = (dir: string) => join(dir, 'catalog', 'chunks.catalog')

describe('the catalog read from its checkpoint', () => {
  it('is the catalog a scroll of the vector store gives, in every namespace, after writes, replacements and deletes', async () => {
    const dir = await writtenFolder()
    expect((await readdir(join(dir, 'catalog'))).sort()).toEqual(['chunks.catalog', 'namespaces'])
    const expected = await scrolled(dir)
    const got = await reopened(dir)
    expect(got.from).toEqual({ default: 'checkpoint', 'tenant-a': 'checkpoint' })
    expect(got.held).toEqual(expected)
    expect((expected['default'] as { documents: unknown[] }).documents).toHaveLength(4)
  })

  it('a clean stop with nothing written since the read keeps the file as it is', async () => {
    const dir = await writtenFolder()
    const before = await readFile(catalogFile(dir))
    const s = await open(dir)
    expect(await s.libraries.checkpoint()).toBe(0)
    await s.kill()
    expect(await readFile(catalogFile(dir))).toEqual(before)
  })

  it('a missing file: the catalog is scrolled, the same', async () => {
    const dir = await writtenFolder()
    await rm(catalogFile(dir))
    const expected = await scrolled(dir)
    const got = await reopened(dir)
    expect(got.from).toEqual({ default: 'scroll (checkpoint: none kept)', 'tenant-a': 'checkpoint' })
    expect(got.held).toEqual(expected)
  })

  it('a file cut short, or with one byte changed: the catalog is scrolled, the same', async () => {
    for (const damage of ['truncated', 'flipped'] as const) {
      const dir = await writtenFolder()
      const file = catalogFile(dir)
      const bytes = await readFile(file)
      if (damage === 'truncated') await truncate(file, Math.floor(bytes.length * 0.6))
      else {
        bytes[bytes.length - 40] = bytes[bytes.length - 40]! ^ 0x01
        await writeFile(file, bytes)
      }
      const expected = await scrolled(dir)
      const got = await reopened(dir)
      expect(got.from['default'], damage).toBe('scroll (checkpoint: damaged (checksum))')
      expect(got.held, damage).toEqual(expected)
    }
  })

  it('a file of another format (a later build\'s magic): not read, the catalog is scrolled', async () => {
    const dir = await writtenFolder()
    const bytes = await readFile(catalogFile(dir))
    bytes.write('RCC9', 0, 'latin1')
    await writeFile(catalogFile(dir), bytes)
    const got = await reopened(dir)
    expect(got.from['default']).toBe('scroll (checkpoint: another format)')
    expect(got.held).toEqual(await scrolled(dir))
  })

  it('stale after writes that no clean stop kept (a killed process): the catalog is scrolled and holds them', async () => {
    const dir = await writtenFolder()
    const s = await open(dir)
    await ingestDocuments(await s.library(), [doc('g', 'tagg')], { exclusive: inTurns() })
    await deleteDocument(await s.library(), 'b', inTurns())
    await s.kill()
    const got = await reopened(dir)
    expect(got.from).toEqual({ default: 'scroll (checkpoint: stale (the vector store changed since))', 'tenant-a': 'checkpoint' })
    expect(got.held).toEqual(await scrolled(dir))
    const ids = (got.held['default'] as { documents: Array<{ id: string }> }).documents.map((d) => d.id)
    expect(ids).toEqual(['a', 'd#e', 'f', 'g'])
  })

  it('stale after a drop and the same number of writes of the same ids with other texts', async () => {
    const dir = await writtenFolder()
    const s = await open(dir)
    const library = await s.library('tenant-a')
    await dropDocuments(library, inTurns())
    await ingestDocuments(library, [doc('z', 'new-z'), doc('y', 'new-y')], { exclusive: inTurns() })
    await s.kill()
    const got = await reopened(dir)
    expect(got.from['tenant-a']).toBe('scroll (checkpoint: stale (the vector store changed since))')
    const texts = (got.held['tenant-a'] as { chunks: Array<{ text: string }> }).chunks.map((c) => c.text).join()
    expect(texts).toContain('new-z')
    expect(texts).not.toContain('tagz')
    expect(got.held).toEqual(await scrolled(dir))
  })

  it('with the lexical index as kept, no sync runs; with its files lost since, it is synced and answers as after a scroll', async () => {
    const dir = await writtenFolder()
    const syncs = async () => {
      const s = await open(dir, true, (lexical) => {
        for (const namespace of NAMESPACES) {
          const index = lexical.get(namespace)
          const sync = index.sync.bind(index)
          index.sync = (documents) => { counted.push(namespace); return sync(documents) }
        }
      })
      const held = await s.held()
      await s.kill()
      return held
    }
    const counted: string[] = []
    const first = await syncs()
    expect(counted).toEqual([])
    await rm(join(dir, 'bm25', 'chunks'), { recursive: true })
    const second = await syncs()
    expect(counted).toEqual(['default'])
    expect(second).toEqual(first)
    expect(second).toEqual(await scrolled(dir))
  })

  it('after a scroll, the next clean stop keeps the catalog again, and the start after it reads the file', async () => {
    const dir = await writtenFolder()
    await rm(catalogFile(dir))
    const s = await open(dir)
    expect(await s.libraries.checkpoint()).toBe(1)
    await s.kill()
    const got = await reopened(dir)
    expect(got.from['default']).toBe('checkpoint')
    expect(got.held).toEqual(await scrolled(dir))
  })
})
