import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { EmbeddedLexicalIndex } from '../../src/providers/lexical-index/embedded.js'
import { EmbeddedLexicalIndexes } from '../../src/providers/lexical-index/indexes.js'
import { describeEnglishStemmingContract, describeLexicalIndexContract, describeLexicalIndexesContract } from '../contracts/lexical-index.contract.js'

describeLexicalIndexContract('embedded (segments)', (dir) => new EmbeddedLexicalIndex({ dir }))
describeLexicalIndexesContract('embedded (one segmented index per namespace)', (dir) => new EmbeddedLexicalIndexes({ dir, name: 'chunks' }))
describeLexicalIndexContract('embedded, cjk-bigram-english', (dir) => new EmbeddedLexicalIndex({ dir, analyzer: 'cjk-bigram-english' }))
describeEnglishStemmingContract('embedded', (dir) => new EmbeddedLexicalIndex({ dir, analyzer: 'cjk-bigram-english' }))

const dirs: string[] = []
const opened: EmbeddedLexicalIndex[] = []
afterAll(async () => {
  for (const i of opened) await i.close()
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})
async function folder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'recall-lexical-'))
  dirs.push(dir)
  return dir
}
function open(dir: string): EmbeddedLexicalIndex {
  const index = new EmbeddedLexicalIndex({ dir })
  opened.push(index)
  return index
}
const docs = Array.from({ length: 30 }, (_, i) => ({ id: `n${i}`, text: `笔记 ${i} 关于 topic${i % 5} 与咳嗽随访` }))
const ids = async (index: EmbeddedLexicalIndex, q: string) => (await index.search(q, 100)).map((h) => h.id)

describe('EmbeddedLexicalIndex persistence', () => {
  it('reloads what was written, with its deletions, from segment files and the manifest', async () => {
    const dir = await folder()
    const first = open(dir)
    for (let i = 0; i < docs.length; i += 3) await first.write({ upsert: docs.slice(i, i + 3) })
    await first.write({ delete: ['n0', 'n5'] })
    await first.write({ upsert: [{ id: 'n10', text: '完全不同的内容' }] })
    await first.idle()
    const again = open(dir)
    expect(await again.search('topic0 咳嗽', 100)).toEqual(await first.search('topic0 咳嗽', 100))
    expect(again.size).toBe(28)
    expect(await ids(again, '完全不同')).toEqual(['n10'])
  })

  it('reconciles with the source of truth on sync: adds, removes and replaces by id and content hash', async () => {
    const dir = await folder()
    const first = open(dir)
    await first.write({ upsert: docs })
    await first.idle()
    // the truth lost n1, changed n2's text and gained n99 while the files were not told (a crash, say)
    const truth = [...docs.filter((d) => d.id !== 'n1' && d.id !== 'n2'), { id: 'n2', text: '换过的文本' }, { id: 'n99', text: '新来的 topic1' }]
    const again = open(dir)
    await again.sync(truth)
    expect(again.size).toBe(30)
    expect(await ids(again, 'topic1')).not.toContain('n1')
    expect(await ids(again, 'topic1')).toContain('n99')
    expect(await ids(again, '换过')).toEqual(['n2'])
    const fresh = open(await folder())
    await fresh.sync(truth)
    expect(await again.search('topic1 咳嗽 换过', 100)).toEqual(await fresh.search('topic1 咳嗽 换过', 100))
  })

  it('rebuilds from the source of truth when a segment file is corrupt or the analyzer changed', async () => {
    const dir = await folder()
    const first = open(dir)
    await first.write({ upsert: docs })
    await first.idle()
    const seg = (await readdir(dir)).find((f) => f.endsWith('.seg'))!
    const bytes = await readFile(join(dir, seg))
    bytes[bytes.length - 5] = bytes[bytes.length - 5]! ^ 0xff
    await writeFile(join(dir, seg), bytes)
    const again = open(dir)
    expect(again.size).toBe(0)
    await again.sync(docs)
    expect(await again.search('topic3', 100)).toEqual(await first.search('topic3', 100))

    await again.idle()
    const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as { analyzer: string }
    await writeFile(join(dir, 'manifest.json'), JSON.stringify({ ...manifest, analyzer: 'cjk-bigram@1' }))
    const third = open(dir)
    await third.sync(docs)
    expect(third.size).toBe(30)
    expect(await third.search('topic3', 100)).toEqual(await first.search('topic3', 100))
  })

  it('leaves the index as it was, in memory and on disk, when a write fails', async () => {
    const dir = await folder()
    const index = open(dir)
    await index.write({ upsert: docs })
    await index.idle()
    const before = await index.search('topic2 咳嗽', 100)
    const version = index.version
    const manifest = await readFile(join(dir, 'manifest.json'), 'utf8')
    // the next segment's file name is taken by a folder: the worker cannot write the new segment
    const next = (JSON.parse(manifest) as { nextSegment: number }).nextSegment
    await mkdir(join(dir, `seg-${next}.seg`))
    await expect(index.write({ upsert: [{ id: 'late', text: 'topic2 迟到' }], delete: ['n2'] })).rejects.toThrow()
    expect(await index.search('topic2 咳嗽', 100)).toEqual(before)
    expect(index.version).toBe(version)
    expect(index.size).toBe(30)
    expect(await readFile(join(dir, 'manifest.json'), 'utf8')).toBe(manifest)
    await rm(join(dir, `seg-${next}.seg`), { recursive: true })
    expect(await open(dir).search('topic2 咳嗽', 100)).toEqual(before)
    // and the index goes on working
    await index.write({ upsert: [{ id: 'late', text: 'topic2 迟到' }] })
    expect(await ids(index, '迟到')).toEqual(['late'])
  })

  it('merges the segments a large sync built into one, in the background', async () => {
    const dir = await folder()
    const index = new EmbeddedLexicalIndex({ dir, syncBatch: 7 })
    opened.push(index)
    await index.sync(docs)
    const before = await index.search('topic2 咳嗽', 100)
    await index.idle()
    expect(index.segmentCount).toBe(1)
    expect(await index.search('topic2 咳嗽', 100)).toEqual(before)
  })

  it('shares the one worker between indexes, each in its own folder, and keeps it while one is open', async () => {
    const a = open(await folder())
    const b = open(await folder())
    await Promise.all([a.write({ upsert: docs.slice(0, 10) }), b.write({ upsert: docs.slice(10, 20) })])
    expect(await ids(a, 'topic1')).toEqual(['n1', 'n6'])
    expect(await ids(b, 'topic1')).toEqual(['n11', 'n16'])
    await a.close()
    await b.write({ upsert: [{ id: 'after', text: 'topic1 之后' }] })
    expect(await ids(b, 'topic1')).toEqual(['after', 'n11', 'n16'])
  })

  it('answers while the worker writes: a search made during a write sees the index before it', async () => {
    const index = open(await folder())
    await index.write({ upsert: docs })
    const big = Array.from({ length: 3000 }, (_, i) => ({ id: `big-${i}`, text: `大量 文档 ${i} topic4` }))
    const writing = index.write({ upsert: big })
    expect(await ids(index, '大量')).toEqual([])
    await writing
    expect((await ids(index, '大量')).length).toBe(100)
  })
})
