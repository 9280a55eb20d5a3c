import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { LegacyEntry } from '../../src/corpus/changes.js'
import { fingerprintOf, heldBefore, unfinishedDeletes, unfinishedDocuments, WriteJournal } from '../../src/corpus/write-journal.js'

const dirs: string[] = []
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }) })

describe('WriteJournal', () => {
  it('keeps what began and did not end, oldest first; a torn file is dropped', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-journal-'))
    dirs.push(dir)
    const journal = new WriteJournal<LegacyEntry>(join(dir, 'journal'))
    const first = await journal.begin({ op: 'delete', namespace: 'n', docIds: ['a'] })
    const second = await journal.begin({ op: 'ingest', namespace: 'n', documents: [{ id: 'b', text: 'x' }] })
    await writeFile(join(dir, 'journal', '999999999999999-torn.json'), '{"op": "ing')
    await journal.end(first)
    expect((await journal.pending()).map((p) => [p.name, p.entry.op])).toEqual([[second, 'ingest']])
    expect(await readdir(join(dir, 'journal'))).toEqual([second])
  })
})

describe('unfinishedDocuments', () => {
  // Two headed sections make two chunks, `d#0` and `d#1` (one per heading, as the chunker cuts).
  const doc = { id: 'd', text: '# 一\n\n新的第一段。\n\n# 二\n\n新的第二段。' }
  const stored = (entries: Array<[string, string]>) => () => new Map(entries)
  it('without what was held at the announcement: a document holding exactly the new version is complete; one holding none of it is left', () => {
    expect(unfinishedDocuments([doc], stored([['d#0', '# 一\n\n新的第一段。'], ['d#1', '# 二\n\n新的第二段。']]))).toEqual([])
    expect(unfinishedDocuments([doc], stored([['d#0', '旧的'], ['d#1', '旧的'], ['d#2', '旧的']]))).toEqual([])
    expect(unfinishedDocuments([doc], stored([]))).toEqual([])
  })
  it('new chunks beside an old tail, or only part of the new chunks, is a mix to write again', () => {
    expect(unfinishedDocuments([doc], stored([['d#0', '# 一\n\n新的第一段。'], ['d#1', '# 二\n\n新的第二段。'], ['d#2', '旧的尾巴']]))).toEqual([doc])
    expect(unfinishedDocuments([doc], stored([['d#0', '# 一\n\n新的第一段。'], ['d#1', '旧的']]))).toEqual([doc])
  })
})

describe('a write announced with what was held before it', () => {
  const doc = { id: 'd', text: '# 一\n\n新的第一段。\n\n# 二\n\n新的第二段。' }
  const old: Array<[string, string]> = [['d#0', '旧的'], ['d#1', '旧的'], ['d#2', '旧的']]
  const stored = (entries: Array<[string, string]>) => () => new Map(entries)
  const beforeOld = heldBefore(['d'], stored(old))
  const beforeAbsent = heldBefore(['d'], stored([]))

  it('a fingerprint depends on every chunk id and text, not on their order; nothing held is null', () => {
    expect(beforeAbsent).toEqual({ d: null })
    expect(fingerprintOf(new Map(old))).toBe(fingerprintOf(new Map([...old].reverse())))
    expect(fingerprintOf(new Map(old))).not.toBe(fingerprintOf(new Map([['d#0', '旧的'], ['d#1', '旧的']])))
    expect(fingerprintOf(new Map(old))).not.toBe(fingerprintOf(new Map([['d#0', '旧的'], ['d#1', '旧的'], ['d#2', '旧 的']])))
  })
  it('an upsert the write never reached is written at the restart, whether the document was absent or older', () => {
    expect(unfinishedDocuments([doc], stored(old), beforeOld)).toEqual([doc])
    expect(unfinishedDocuments([doc], stored([]), beforeAbsent)).toEqual([doc])
  })
  it('an upsert a later write overtook is left as that write left it; a complete one is not written again', () => {
    expect(unfinishedDocuments([doc], stored([['d#0', '更新的']]), beforeOld)).toEqual([])
    expect(unfinishedDocuments([doc], stored([['d#0', '更新的']]), beforeAbsent)).toEqual([])
    expect(unfinishedDocuments([doc], stored([['d#0', '# 一\n\n新的第一段。'], ['d#1', '# 二\n\n新的第二段。']]), beforeOld)).toEqual([])
  })
  it('a delete is finished only where the document is still held as when it was announced', () => {
    expect(unfinishedDeletes(['d'], stored(old), beforeOld)).toEqual(['d'])
    expect(unfinishedDeletes(['d'], stored([]), beforeOld)).toEqual([])
    expect(unfinishedDeletes(['d'], stored([['d#0', '更新的']]), beforeOld)).toEqual([])
    expect(unfinishedDeletes(['d'], stored([]), beforeAbsent)).toEqual([])
    expect(unfinishedDeletes(['d'], stored(old))).toEqual([])
  })
})
