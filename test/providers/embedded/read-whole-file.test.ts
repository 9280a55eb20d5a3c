/**
 * `readWholeFile` reads a file past 2 GiB, where `fs.readFile` gives up (a vector snapshot at a million chunks is
 * 2.4–2.8 GB): a sparse file of 2 GiB + 3 bytes, with marks at its start, across the 1 GiB and 2 GiB boundaries and at its end.
 */
import { open, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readWholeFile } from '../../../src/providers/embedded/durable-file.js'

const GiB = 2 ** 30
const dirs: string[] = []
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }) })

describe('readWholeFile', () => {
  it('reads a file of more than 2 GiB whole, every byte where the file has it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-read-whole-'))
    dirs.push(dir)
    const file = join(dir, 'large')
    const size = 2 * GiB + 3
    const marks: Array<[number, number]> = [[0, 11], [GiB - 1, 12], [GiB, 13], [2 * GiB - 1, 14], [2 * GiB, 15], [size - 1, 16]]
    const writing = await open(file, 'w')
    await writing.truncate(size)
    for (const [at, value] of marks) await writing.write(Buffer.from([value]), 0, 1, at)
    await writing.close()

    const reading = await open(file, 'r')
    let bytes: Buffer
    try {
      bytes = await readWholeFile(reading.fd)
    } finally {
      await reading.close()
    }
    expect(bytes.length).toBe(size)
    for (const [at, value] of marks) expect(bytes[at]).toBe(value)
    // and a byte no mark was written to reads as the hole it is
    expect(bytes[GiB + 7]).toBe(0)
  }, 120_000)
})
