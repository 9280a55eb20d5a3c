/**
 * A log file's records read a frame at a time (`LogFileRecords`, what a fold thread goes over): the records `open`
 * recovers (those above the snapshot's sequence number), the same on every pass, and a file changed between passes
 * refused rather than misread.
 */
import { mkdtemp, rm, truncate, writeFile, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { DurableLog, type DurableLogOptions } from '../../../src/providers/embedded/durable-log.js'
import { LogFileRecords, recordBytes } from '../../../src/providers/embedded/log-file-records.js'

const dirs: string[] = []
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }) })
const texts = (bs: Iterable<Buffer>) => [...bs].map((b) => b.toString('utf8'))

async function options(): Promise<DurableLogOptions> {
  const root = await mkdtemp(join(tmpdir(), 'recall-log-records-'))
  dirs.push(root)
  return { backend: 'test-store:memory', kind: 'test-store', format: 1, dir: root, name: 'things' }
}

describe('LogFileRecords', () => {
  it('goes over the records above the snapshot, the same on every pass, and knows their bytes and last sequence number', async () => {
    const opts = await options()
    const { log } = await DurableLog.open(opts)
    for (const p of ['one', 'two']) await log.append(Buffer.from(p))
    await log.compact(Buffer.from('state after two'))
    for (const p of ['三', 'four', '五六']) await log.append(Buffer.from(p))
    const recovered = await DurableLog.open(opts)
    expect(texts(recovered.records)).toEqual(['三', 'four', '五六'])
    // the snapshot holds records 1 and 2; the log file starts after them
    const records = LogFileRecords.open(log.logFile, { snapshotSeq: 2, hasSnapshot: true, previous: -1 }, opts, opts.backend)
    expect(texts(records)).toEqual(['三', 'four', '五六'])
    expect(texts(records)).toEqual(['三', 'four', '五六'])
    expect(records.bytes).toBe(3 + 4 + 6)
    expect(records.last).toBe(5)
    // what a fold sizes itself by: the same for the file and for the records held
    expect(recordBytes(records)).toBe(13)
    expect(recordBytes(recovered.records)).toBe(13)
  })

  it('skips the records a snapshot already holds, as open does after a crash between a snapshot and its log', async () => {
    const opts = await options()
    const { log } = await DurableLog.open(opts)
    for (const p of ['a', 'b', 'c']) await log.append(Buffer.from(p))
    const records = LogFileRecords.open(log.logFile, { snapshotSeq: 2, hasSnapshot: true, previous: -1 }, opts, opts.backend)
    expect(texts(records)).toEqual(['c'])
    expect(records.bytes).toBe(1)
  })

  it('refuses a pass over a file cut after it was opened, and a file of another store', async () => {
    const opts = await options()
    const { log } = await DurableLog.open(opts)
    for (const p of ['alpha', 'beta']) await log.append(Buffer.from(p))
    const records = LogFileRecords.open(log.logFile, { snapshotSeq: 0, hasSnapshot: true, previous: -1 }, opts, opts.backend)
    await truncate(log.logFile, (await readFile(log.logFile)).length - 2)
    expect(() => texts(records)).toThrow(/changed while it was folded/)
    const other = join(opts.dir, 'other.log')
    await writeFile(other, await readFile(log.logFile))
    expect(() => LogFileRecords.open(other, { snapshotSeq: 0, hasSnapshot: true, previous: -1 }, { ...opts, kind: 'another-store' }, opts.backend)).toThrow(/another-store/)
  })
})
