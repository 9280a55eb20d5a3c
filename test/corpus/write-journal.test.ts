import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { mixedDocuments, WriteJournal } from '../../src/corpus/write-journal.js'

const dirs: string[] = []
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }) })

describe('WriteJournal', () => {
  it('keeps what began and did not end, oldest first; a torn file is dropped', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-journal-'))
    dirs.push(dir)
    const journal = new WriteJournal(join(dir, 'journal'))
    const first = await journal.begin({ op: 'delete', namespace: 'n', docIds: ['a'] })
    const second = await journal.begin({ op: 'ingest', namespace: 'n', documents: [{ id: 'b', text: 'x' }] })
    await writeFile(join(dir, 'journal', '999999999999999-torn.json'), '{"op": "ing')
    await journal.end(first)
    expect((await journal.pending()).map((p) => [p.name, p.entry.op])).toEqual([[second, 'ingest']])
    expect(await readdir(join(dir, 'journal'))).toEqual([second])
  })
})

describe('mixedDocuments', () => {
  // Two headed sections make two chunks, `d#0` and `d#1` (one per heading, as the chunker cuts).
  const doc = { id: 'd', text: '# 一\n\n新的第一段。\n\n# 二\n\n新的第二段。' }
  const stored = (entries: Array<[string, string]>) => () => new Map(entries)
  it('a document holding exactly the new version is complete; one holding none of it was never reached', () => {
    expect(mixedDocuments([doc], stored([['d#0', '# 一\n\n新的第一段。'], ['d#1', '# 二\n\n新的第二段。']]))).toEqual([])
    expect(mixedDocuments([doc], stored([['d#0', '旧的'], ['d#1', '旧的'], ['d#2', '旧的']]))).toEqual([])
    expect(mixedDocuments([doc], stored([]))).toEqual([])
  })
  it('new chunks beside an old tail, or only part of the new chunks, is a mix to write again', () => {
    expect(mixedDocuments([doc], stored([['d#0', '# 一\n\n新的第一段。'], ['d#1', '# 二\n\n新的第二段。'], ['d#2', '旧的尾巴']]))).toEqual([doc])
    expect(mixedDocuments([doc], stored([['d#0', '# 一\n\n新的第一段。'], ['d#1', '旧的']]))).toEqual([doc])
  })
})
