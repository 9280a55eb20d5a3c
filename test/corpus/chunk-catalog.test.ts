import { describe, expect, it } from 'vitest'
import { ChunkCatalog } from '../../src/corpus/documents/chunk-catalog.js'
import { decodeChunk, encodeChunk, type ChunkRecord } from '../../src/kernel/chunk-payload.js'

const V1 = { chunker: 'c1', analyzer: 'cjk-bigram@1', model: 'm1' }
const V2 = { chunker: 'c1', analyzer: 'cjk-bigram@1', model: 'm2' }

/** What a reader of the vector store gets for a chunk: the point's payload decoded (the independent codec). */
const asDecoded = (c: ChunkRecord): ChunkRecord => decodeChunk(c.id, JSON.parse(JSON.stringify(encodeChunk(c))))

const base = (doc: string, index: number, extra: Partial<ChunkRecord> = {}): ChunkRecord => ({
  id: `${doc}#${index}`, doc_id: doc, chunk_index: index, text: `${doc} 第${index}段`, source: `${doc}.md`, title: `标题 ${doc}`,
  versions: { ...V1 }, fingerprint: `fp:${doc}`, ...extra
})

/** Chunks of every shape the catalog stores differently: ids not of the `<doc>#<index>` form, a `#` in a doc id, rare fields, per-chunk differences. */
function varied(): ChunkRecord[] {
  return [
    base('a', 0, { heading_path: ['第一章'], anchor: 'di-yi-zhang' }),
    base('a', 1, { heading_path: ['第一章'], anchor: 'di-yi-zhang', split: 'lines' }),
    base('a', 2, { heading_path: ['第一章', '第二节'], anchor: 'di-er-jie', page: 3, page_end: 4 }),
    // the same document, another source, title, fingerprint, versions and metadata on one chunk
    base('a', 3, { source: 'other.md', title: 'another', fingerprint: 'fp:other', versions: { ...V2 }, metadata: { lang: 'zh', n: 1 } }),
    // no title, no versions, no fingerprint (written before they were kept)
    { id: 'b#0', doc_id: 'b', chunk_index: 0, text: 'bare', source: 'b' },
    // an id that is not <doc_id>#<index>
    base('c', 0, { id: 'c#00' }),
    base('c', 1, { id: 'elsewhere#1' }),
    base('c', 2),
    // a document id holding `#`
    base('d#e', 0, { metadata: { tags: ['x', 'y'] } }),
    base('d#e', 1, { metadata: { tags: ['x', 'y'] } }),
    // out of index order, as a scroll in id order gives them ('f#10' < 'f#2')
    base('f', 10), base('f', 2), base('f', 0)
  ]
}

describe('ChunkCatalog', () => {
  it('gives back every chunk as its decoded point, the same keys in the same order', () => {
    const catalog = new ChunkCatalog()
    const chunks = varied()
    for (const c of chunks) expect(catalog.add(c)).toBe(true)
    expect(catalog.size).toBe(chunks.length)
    for (const c of chunks) {
      const got = catalog.get(c.id)
      expect(got).toEqual(asDecoded(c))
      expect(Object.keys(got!)).toEqual(Object.keys(asDecoded(c)))
    }
    expect([...catalog.values()].sort(byId)).toEqual(chunks.map(asDecoded).sort(byId))
  })

  it('answers undefined for ids it does not hold, including near misses of held ones', () => {
    const catalog = new ChunkCatalog()
    for (const c of varied()) catalog.add(c)
    for (const id of ['nope', 'a', 'a#', 'a#4', 'a#01', 'a#1.0', 'a#-1', 'c#0', 'c#1', 'elsewhere#0', 'd#e', 'd#e#2', 'f#1', '#0']) {
      expect(catalog.get(id), id).toBeUndefined()
    }
  })

  it('lists a document\'s chunk ids and chunks in the order they were added; none for an unknown document', () => {
    const catalog = new ChunkCatalog()
    for (const c of varied()) catalog.add(c)
    expect(catalog.idsOf('c')).toEqual(['c#00', 'elsewhere#1', 'c#2'])
    expect(catalog.idsOf('f')).toEqual(['f#10', 'f#2', 'f#0'])
    expect(catalog.chunksOf('d#e').map((c) => c.id)).toEqual(['d#e#0', 'd#e#1'])
    expect(catalog.idsOf('zzz')).toBeUndefined()
    expect(catalog.chunksOf('zzz')).toEqual([])
  })

  it('a chunk added again under its id replaces the held one, also from another document', () => {
    const catalog = new ChunkCatalog()
    for (const c of varied()) catalog.add(c)
    const size = catalog.size
    const replaced = base('a', 1, { text: 'new text', heading_path: ['新'] })
    expect(catalog.add(replaced)).toBe(false)
    const moved: ChunkRecord = { ...base('g', 1), id: 'elsewhere#1' }
    expect(catalog.add(moved)).toBe(false)
    expect(catalog.size).toBe(size)
    expect(catalog.get('a#1')).toEqual(asDecoded(replaced))
    expect(catalog.get('elsewhere#1')).toEqual(asDecoded(moved))
    expect(catalog.idsOf('c')).toEqual(['c#00', 'c#2'])
    expect(catalog.idsOf('g')).toEqual(['elsewhere#1'])
  })

  it('deleting documents removes their chunks, odd ids included, and leaves the others', () => {
    const catalog = new ChunkCatalog()
    const chunks = varied()
    for (const c of chunks) catalog.add(c)
    catalog.deleteDocuments(['c', 'a', 'never-held'])
    const kept = chunks.filter((c) => c.doc_id !== 'a' && c.doc_id !== 'c')
    expect(catalog.size).toBe(kept.length)
    for (const c of chunks) expect(catalog.get(c.id)).toEqual(kept.includes(c) ? asDecoded(c) : undefined)
    // an odd id of a deleted document is free for another
    catalog.add({ ...base('h', 0), id: 'c#00' })
    expect(catalog.get('c#00')?.doc_id).toBe('h')
  })

  it('a record it gives is the caller\'s: changing its heading path changes nothing held', () => {
    const catalog = new ChunkCatalog()
    catalog.add(base('a', 0, { heading_path: ['一'] }))
    catalog.add(base('a', 1, { heading_path: ['一'] }))
    catalog.get('a#0')!.heading_path!.push('changed')
    expect(catalog.get('a#0')!.heading_path).toEqual(['一'])
    expect(catalog.get('a#1')!.heading_path).toEqual(['一'])
  })
})

describe('ChunkCatalog columns (what its checkpoint file keeps)', () => {
  it('a catalog made from its columns, through JSON, holds every chunk of every shape, in the same order, and works on', () => {
    const original = new ChunkCatalog()
    for (const c of varied()) original.add(c)
    original.deleteDocuments(['b'])
    const copy = ChunkCatalog.fromColumns(JSON.parse(JSON.stringify(original.toColumns())))
    expect(copy.size).toBe(original.size)
    expect([...copy.values()]).toEqual([...original.values()])
    expect([...copy.documents()]).toEqual([...original.documents()])
    for (const c of varied().filter((c) => c.doc_id !== 'b')) expect(copy.get(c.id), c.id).toEqual(asDecoded(c))
    for (const id of ['b#0', 'c#0', 'elsewhere#0', 'a#4']) expect(copy.get(id), id).toBeUndefined()
    expect(copy.idsOf('c')).toEqual(['c#00', 'elsewhere#1', 'c#2'])
    // the copy goes on as the original does: a replaced odd id, a deleted document
    for (const catalog of [original, copy]) {
      catalog.add(base('c', 7, { id: 'elsewhere#1' }))
      catalog.deleteDocuments(['d#e'])
    }
    expect([...copy.values()]).toEqual([...original.values()])
    expect(copy.get('elsewhere#1')?.chunk_index).toBe(7)
  })

  it('columns that do not fit together are refused with a RangeError', () => {
    const original = new ChunkCatalog()
    for (const c of varied()) original.add(c)
    const columns = () => JSON.parse(JSON.stringify(original.toColumns())) as ReturnType<ChunkCatalog['toColumns']>
    const cases: Array<[string, (c: ReturnType<ChunkCatalog['toColumns']>) => void]> = [
      ['a chunk column shorter', (c) => c.indexes.pop()],
      ['more chunks than documents hold', (c) => c.docs.pop()],
      ['a document counting more chunks than there are', (c) => { c.docs[0]![1] += 100 }],
      ['a shared row out of range', (c) => { c.docs[0]![0] = 99 }],
      ['a heading path out of range', (c) => { c.headings[0] = 99 }]
    ]
    for (const [what, damage] of cases) {
      const c = columns()
      damage(c)
      expect(() => ChunkCatalog.fromColumns(c), what).toThrow(RangeError)
    }
  })
})

const byId = (a: ChunkRecord, b: ChunkRecord) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
