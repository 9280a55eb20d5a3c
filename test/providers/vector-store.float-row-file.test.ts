import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { FloatRowFile } from '../../src/providers/vector-store/float-row-file.js'

const dir = mkdtempSync(join(tmpdir(), 'recall-float-rows-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const DIMS = 24
/** A row whose every float says which row and which write it is: row × 1,000 + write + dimension / 100. */
const rowOf = (row: number, write: number) => Float32Array.from({ length: DIMS }, (_, d) => row * 1000 + write + d / 100)

describe('FloatRowFile', () => {
  it('reads back the last row written at each position, whether still gathered or already written to the file', () => {
    const file = new FloatRowFile(dir, DIMS)
    const expected = new Map<number, Float32Array>()
    let write = 0
    const put = (row: number) => {
      const v = rowOf(row, ++write)
      file.write(row, v)
      expected.set(row, v)
    }
    const check = () => {
      for (const [row, v] of expected) expect(file.read(row), `row ${row}`).toEqual(v)
    }
    // rows in order, past several gathered runs (64 rows each), read back as they go (a load checking a shared row)
    for (let row = 0; row < 200; row++) {
      put(row)
      if (row % 7 === 6) expect(file.read(row - 3)).toEqual(expected.get(row - 3))
    }
    check()
    // a row rewritten in the run still gathered, one rewritten long after it was written, a gap, a freed row used again
    put(199)
    put(5)
    put(400)
    put(401)
    put(3)
    put(402)
    check()
    const into = new Uint8Array(DIMS * 4)
    file.readInto(401, into)
    expect(new Float32Array(into.buffer)).toEqual(expected.get(401))
    // a row never written is past the file's end: an error naming it, not zeros
    expect(() => file.read(5000)).toThrow(/float row 5000/)
    file.close()
    // the file was unlinked when opened: nothing is left in the folder
    expect(readdirSync(dir)).toEqual([])
  })
})
