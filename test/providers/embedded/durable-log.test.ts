import { copyFile, mkdir, mkdtemp, readFile, readdir, rename, rm, stat, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { DurableLog, encodeSnapshotFile, type DurableLogOptions } from '../../../src/providers/embedded/durable-log.js'
import type { StoredSnapshot } from '../../../src/providers/embedded/snapshot-stream.js'
import { BackendUnavailableError, UnexpectedResponseError } from '../../../src/providers/errors.js'

const dirs: string[] = []
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }) })

async function fresh(extra: Partial<DurableLogOptions> = {}): Promise<DurableLogOptions> {
  const root = await mkdtemp(join(tmpdir(), 'recall-kernel-'))
  dirs.push(root)
  return { backend: 'test-store:memory', kind: 'test-store', format: 1, dir: join(root, 'ns'), name: 'things', ownsDir: true, ...extra }
}

const text = (b: StoredSnapshot | undefined) => b?.bytes().toString('utf8')
const texts = (bs: Buffer[]) => bs.map((b) => b.toString('utf8'))
const bytes = (s: string) => Buffer.from(s, 'utf8')
// One record on disk: u32 length + u32 CRC-32, then the body: an f64 sequence number and the payload.
const recordBytes = (payload: string) => 8 + 8 + Buffer.byteLength(payload)

async function appendAll(options: DurableLogOptions, payloads: string[]): Promise<DurableLog> {
  const { log } = await DurableLog.open(options)
  for (const p of payloads) await log.append(bytes(p))
  return log
}

describe('DurableLog', () => {
  it('creates nothing on open and reads back what was appended, in order', async () => {
    const options = await fresh()
    const { log, snapshot, records } = await DurableLog.open(options)
    expect(snapshot).toBeUndefined()
    expect(records).toEqual([])
    await expect(stat(options.dir)).rejects.toThrow(/ENOENT/)
    for (const p of ['one', 'two', '三']) await log.append(bytes(p))
    const again = await DurableLog.open(options)
    expect(text(again.snapshot)).toBeUndefined()
    expect(texts(again.records)).toEqual(['one', 'two', '三'])
    expect((await readdir(options.dir)).sort()).toEqual(['things.log', 'things.snap'])
  })

  it('cuts a torn tail at open and keeps every record before it', async () => {
    const options = await fresh()
    const log = await appendAll(options, ['alpha', 'beta'])
    const logFile = log.logFile
    const full = (await stat(logFile)).size
    // the last record loses its final 3 bytes, as a crash mid-write leaves it
    await truncate(logFile, full - 3)
    const reopened = await DurableLog.open(options)
    expect(texts(reopened.records)).toEqual(['alpha'])
    expect((await stat(logFile)).size).toBe(full - recordBytes('beta'))
    await reopened.log.append(bytes('gamma'))
    expect(texts((await DurableLog.open(options)).records)).toEqual(['alpha', 'gamma'])
  })

  it('stops at a flipped byte: the records before it are kept, the corrupt one and after are cut', async () => {
    const options = await fresh()
    const log = await appendAll(options, ['first', 'second', 'third'])
    const raw = await readFile(log.logFile)
    // the last byte of the second record's payload
    const at = raw.length - recordBytes('third') - 1
    raw[at] = raw[at]! ^ 0x01
    await writeFile(log.logFile, raw)
    const reopened = await DurableLog.open(options)
    expect(texts(reopened.records)).toEqual(['first'])
    expect((await stat(log.logFile)).size).toBe(raw.length - recordBytes('second') - recordBytes('third'))
  })

  it('a log without its snapshot replays from the first record, and is refused once a snapshot held its start', async () => {
    const options = await fresh()
    const log = await appendAll(options, ['a', 'b'])
    await rm(log.snapshotFile)
    expect(texts((await DurableLog.open(options)).records)).toEqual(['a', 'b'])

    const other = await fresh()
    const compacted = await appendAll(other, ['a', 'b'])
    await compacted.compact(bytes('state ab'))
    await compacted.append(bytes('c'))
    await rm(compacted.snapshotFile)
    const refused = DurableLog.open(other)
    await expect(refused).rejects.toBeInstanceOf(UnexpectedResponseError)
    await expect(refused).rejects.toThrow(/starts at record 3 and there is no snapshot/)
  })

  it('a crash between the snapshot rename and the log truncation applies no record twice', async () => {
    const options = await fresh()
    const log = await appendAll(options, ['a', 'b'])
    const before = `${log.logFile}.before`
    await copyFile(log.logFile, before)
    await log.compact(bytes('state ab'))
    // the snapshot is in place, the log still holds the records it folded in
    await rename(before, log.logFile)
    const reopened = await DurableLog.open(options)
    expect(text(reopened.snapshot)).toBe('state ab')
    expect(reopened.records).toEqual([])
    await reopened.log.append(bytes('c'))
    const last = await DurableLog.open(options)
    expect(text(last.snapshot)).toBe('state ab')
    expect(texts(last.records)).toEqual(['c'])
  })

  it('compaction folds the log into the snapshot and empties the log', async () => {
    const options = await fresh({ compactionFloorBytes: 0 })
    const log = await appendAll(options, ['x'])
    const headerOnly = (await stat(log.logFile)).size - recordBytes('x')
    const snapshotSize = (await stat(log.snapshotFile)).size
    // due once the records outweigh the snapshot
    const due = Math.floor(snapshotSize / recordBytes('x')) + 1
    for (let i = 1; i < due; i++) {
      expect(log.needsCompaction(), `after ${i} records`).toBe(false)
      await log.append(bytes('x'))
    }
    expect(log.needsCompaction()).toBe(true)
    await log.compact(bytes('state x'))
    expect((await stat(log.logFile)).size).toBe(headerOnly)
    expect(log.needsCompaction()).toBe(false)
    const reopened = await DurableLog.open(options)
    expect(text(reopened.snapshot)).toBe('state x')
    expect(reopened.records).toEqual([])
  })

  it('refuses a file of another format version, kind or role, and a damaged snapshot, naming the file', async () => {
    const options = await fresh()
    const log = await appendAll(options, ['a'])
    await log.compact(bytes('state a'))
    await expect(DurableLog.open({ ...options, format: 2 })).rejects.toThrow(/things\.snap is refused: test-store format version 1, this build reads version 2/)
    await expect(DurableLog.open({ ...options, kind: 'other-store' })).rejects.toThrow(/belongs to store kind test-store, expected other-store/)
    await copyFile(log.logFile, log.snapshotFile)
    await expect(DurableLog.open(options)).rejects.toThrow(/it is a log file, expected a snapshot/)

    const second = await fresh()
    const other = await appendAll(second, ['a'])
    await other.compact(bytes('state a'))
    const raw = await readFile(other.snapshotFile)
    raw[raw.length - 1] = raw[raw.length - 1]! ^ 0x10
    await writeFile(other.snapshotFile, raw)
    await expect(DurableLog.open(second)).rejects.toThrow(/snapshot record is damaged/)
    await writeFile(other.snapshotFile, '{"format":1}')
    const notOurs = DurableLog.open(second)
    await expect(notOurs).rejects.toBeInstanceOf(UnexpectedResponseError)
    await expect(notOurs).rejects.toThrow(/not a recall store file/)
  })

  it('reads a snapshot checked at open without a second check, and checks it again once the file changed after open', async () => {
    const options = await fresh()
    const log = await appendAll(options, ['a'])
    await log.compact(bytes('state a'))
    const opened = await DurableLog.open(options)
    expect(text(opened.snapshot)).toBe('state a')
    // the payload's last byte flipped in place, after open checked it (a pause first: a file's times move in clock ticks)
    await new Promise((resolve) => setTimeout(resolve, 50))
    const raw = await readFile(log.snapshotFile)
    raw[raw.length - 1] = raw[raw.length - 1]! ^ 0x10
    await writeFile(log.snapshotFile, raw)
    expect(() => text(opened.snapshot)).toThrow(/snapshot record is damaged/)

    // a damaged copy renamed over a checked one: another file, as a compaction puts a snapshot in place
    const second = await fresh()
    const other = await appendAll(second, ['b'])
    await other.compact(bytes('state b'))
    const checked = await DurableLog.open(second)
    const copy = await readFile(other.snapshotFile)
    copy[copy.length - 1] = copy[copy.length - 1]! ^ 0x10
    await writeFile(`${other.snapshotFile}.tmp`, copy)
    await rename(`${other.snapshotFile}.tmp`, other.snapshotFile)
    expect(() => text(checked.snapshot)).toThrow(/snapshot record is damaged/)
  })

  it('maps a failed append to BackendUnavailableError, changes nothing, and appends again once the fault is gone', async () => {
    const options = await fresh()
    const log = await appendAll(options, ['kept'])
    const aside = `${log.logFile}.aside`
    await rename(log.logFile, aside)
    await mkdir(log.logFile)
    const failed = log.append(bytes('lost'))
    await expect(failed).rejects.toBeInstanceOf(BackendUnavailableError)
    await expect(failed).rejects.toThrow(/cannot append to things in .*: EISDIR/)
    await rm(log.logFile, { recursive: true })
    await rename(aside, log.logFile)
    await log.append(bytes('next'))
    expect(texts((await DurableLog.open(options)).records)).toEqual(['kept', 'next'])
  })

  it('drop removes the files and the namespace folder; a later append starts afresh', async () => {
    const options = await fresh()
    const log = await appendAll(options, ['a', 'b'])
    await log.drop()
    await expect(stat(options.dir)).rejects.toThrow(/ENOENT/)
    const reopened = await DurableLog.open(options)
    expect(reopened.snapshot).toBeUndefined()
    expect(reopened.records).toEqual([])
    await log.append(bytes('c'))
    expect(texts((await DurableLog.open(options)).records)).toEqual(['c'])
  })

  it('a closed log refuses appends with BackendUnavailableError', async () => {
    const log = await appendAll(await fresh(), ['a'])
    await log.close()
    await expect(log.append(bytes('b'))).rejects.toBeInstanceOf(BackendUnavailableError)
  })

  it('upgrades a legacy whole-state file once: its snapshot is written, the old file removed', async () => {
    const options = await fresh({ ownsDir: false })
    await mkdir(options.dir, { recursive: true })
    const file = join(options.dir, 'things.json')
    await writeFile(file, '{"old":true}')
    const legacy = { file, upgrade: (b: Buffer) => bytes(`upgraded ${b.toString('utf8')}`) }
    const opened = await DurableLog.open({ ...options, legacy })
    expect(text(opened.snapshot)).toBe('upgraded {"old":true}')
    expect((await readdir(options.dir)).sort()).toEqual(['things.log', 'things.snap'])
    await opened.log.append(bytes('after'))
    const again = await DurableLog.open({ ...options, legacy })
    expect(text(again.snapshot)).toBe('upgraded {"old":true}')
    expect(texts(again.records)).toEqual(['after'])

    const broken = await fresh({ ownsDir: false })
    await mkdir(broken.dir, { recursive: true })
    await writeFile(join(broken.dir, 'things.json'), '{not json')
    const refused = DurableLog.open({ ...broken, legacy: { file: join(broken.dir, 'things.json'), upgrade: (b) => bytes(JSON.stringify(JSON.parse(b.toString()))) } })
    await expect(refused).rejects.toBeInstanceOf(UnexpectedResponseError)
    await expect(refused).rejects.toThrow(/things\.json cannot be upgraded/)
  })
  describe('compaction off the write queue (beginCompaction, a fold from the files, finishCompaction)', () => {
    // what a store's fold thread does, with a fold that joins the payloads: the snapshot written beside its place
    async function foldBeside(options: DurableLogOptions, seq: number, state: string): Promise<{ file: string; bytes: number }> {
      const file = join(options.dir, 'things.snap.fold.tmp')
      const encoded = encodeSnapshotFile(seq, bytes(state), options)
      await writeFile(file, encoded)
      return { file, bytes: encoded.length }
    }

    it('appends go on while a fold runs; open reads snapshot, fold file and log in order; the finished fold holds the set-aside records', async () => {
      const options = await fresh()
      const log = await appendAll(options, ['a', 'b'])
      await log.compact(bytes('a+b'))
      await log.append(bytes('c'))
      await log.append(bytes('d'))
      const fold = await log.beginCompaction()
      expect(fold).toMatchObject({ seq: 4 })
      expect((await readdir(options.dir)).sort()).toEqual(['things.fold.log', 'things.log', 'things.snap'])
      // a second call while it is pending answers the same fold and sets nothing more aside
      expect(await log.beginCompaction()).toBe(fold)
      await log.append(bytes('e'))

      const during = await DurableLog.open(options)
      expect(text(during.snapshot)).toBe('a+b')
      expect(texts(during.records)).toEqual(['c', 'd', 'e'])
      expect(during.log.pendingFold).toMatchObject({ seq: 4 })

      await log.finishCompaction(fold!, await foldBeside(options, 4, 'a+b+c+d'))
      await log.append(bytes('f'))
      expect((await readdir(options.dir)).sort()).toEqual(['things.log', 'things.snap'])
      const after = await DurableLog.open(options)
      expect(text(after.snapshot)).toBe('a+b+c+d')
      expect(texts(after.records)).toEqual(['e', 'f'])
      expect(after.log.pendingFold).toBeUndefined()
    })

    it('a crash after the new snapshot is in place and before the fold file is removed applies no record twice', async () => {
      const options = await fresh()
      const log = await appendAll(options, ['a', 'b'])
      const fold = await log.beginCompaction()
      await log.append(bytes('c'))
      const foldFile = join(options.dir, 'things.fold.log')
      await copyFile(foldFile, `${foldFile}.kept`)
      await log.finishCompaction(fold!, await foldBeside(options, 2, 'a+b'))
      await rename(`${foldFile}.kept`, foldFile)
      const opened = await DurableLog.open(options)
      expect(text(opened.snapshot)).toBe('a+b')
      expect(texts(opened.records)).toEqual(['c'])
      expect(opened.log.pendingFold).toBeUndefined()
      expect((await readdir(options.dir)).sort()).toEqual(['things.log', 'things.snap'])
    })

    it('a crash after the log was set aside and before the new log existed: the fold file replays, a new log continues it', async () => {
      const options = await fresh()
      const log = await appendAll(options, ['a', 'b'])
      await log.beginCompaction()
      await rm(join(options.dir, 'things.log'))
      // and a fold's snapshot written but not renamed, with a block fold's rows and log shares beside it: the restart drops them
      await foldBeside(options, 2, 'half done')
      for (const temp of ['things.snap.fold.tmp.rows', 'things.snap.fold.tmp.shares']) await writeFile(join(options.dir, temp), 'half done')
      const opened = await DurableLog.open(options)
      expect(text(opened.snapshot)).toBeUndefined()
      expect(texts(opened.records)).toEqual(['a', 'b'])
      expect(opened.log.pendingFold).toMatchObject({ seq: 2 })
      expect((await readdir(options.dir)).sort()).toEqual(['things.fold.log', 'things.log', 'things.snap'])
      await opened.log.append(bytes('c'))
      expect(texts((await DurableLog.open(options)).records)).toEqual(['a', 'b', 'c'])
    })

    it('drop removes a pending fold file too', async () => {
      const options = await fresh()
      const log = await appendAll(options, ['a'])
      await log.beginCompaction()
      await log.drop()
      await expect(stat(options.dir)).rejects.toThrow(/ENOENT/)
      const again = await DurableLog.open(options)
      expect(again.records).toEqual([])
      expect(again.log.pendingFold).toBeUndefined()
    })
  })
})
