import { describe, expect, it } from 'vitest'
import { RowsByHash } from '../../src/providers/vector-store/rows-by-hash.js'
import { seededRandom } from '../../src/evaluation/statistics.js'

/** The rows a walk from `hash`'s first slot finds under `hash`. */
function rowsOf(table: RowsByHash, hash: number): number[] {
  const out: number[] = []
  for (let slot = table.home(hash), row = table.rowAt(slot); row !== -1; slot = table.next(slot), row = table.rowAt(slot)) {
    if (table.hashAt(slot) === hash) out.push(row)
  }
  return out.sort((a, b) => a - b)
}

describe('RowsByHash', () => {
  // few distinct hashes: long runs of one hash and of hashes sharing a first slot, through growth and removals
  it.each([3, 40, 5000])('finds exactly the rows added and not removed under each hash, %i distinct hashes', (hashCount) => {
    const random = seededRandom(hashCount)
    const hashes = Array.from({ length: hashCount }, (_, i) => (i * 2654435761 + 12345) >>> 0)
    const table = new RowsByHash()
    const model = new Map<number, number>()
    let next = 0
    for (let step = 0; step < 6000; step++) {
      if (model.size === 0 || random() < 0.6) {
        const row = next++
        const hash = hashes[Math.floor(random() * hashCount)]!
        table.add(row, hash)
        model.set(row, hash)
      } else {
        const live = [...model.keys()]
        const row = live[Math.floor(random() * live.length)]!
        table.remove(row, model.get(row)!)
        model.delete(row)
      }
      if (step % 250 === 0 || step > 5990) {
        const expected = new Map<number, number[]>()
        for (const [row, hash] of model) expected.set(hash, [...(expected.get(hash) ?? []), row])
        for (const hash of hashes) expect(rowsOf(table, hash)).toEqual((expected.get(hash) ?? []).sort((a, b) => a - b))
        expect(table.size).toBe(model.size)
      }
    }
  })

  it('finds them when a run of rows wraps past the table\'s last slot', () => {
    const random = seededRandom(62)
    const table = new RowsByHash()
    // hashes whose walk starts in the last slots of the first table (64 slots; it stays so below 32 rows)
    const hashes: number[] = []
    for (let h = 1; hashes.length < 4; h++) if (table.home(h) >= 62) hashes.push(h)
    const model = new Map<number, number>()
    let next = 0
    for (let step = 0; step < 3000; step++) {
      if (model.size < 8 || (model.size < 30 && random() < 0.5)) {
        const hash = hashes[Math.floor(random() * hashes.length)]!
        table.add(next, hash)
        model.set(next++, hash)
      } else {
        const live = [...model.keys()]
        const row = live[Math.floor(random() * live.length)]!
        table.remove(row, model.get(row)!)
        model.delete(row)
      }
      for (const hash of hashes) expect(rowsOf(table, hash)).toEqual([...model].filter(([, h]) => h === hash).map(([row]) => row).sort((a, b) => a - b))
    }
  })

  it('refuses to remove a row it does not hold, and holds nothing after clear', () => {
    const table = new RowsByHash()
    table.add(1, 99)
    expect(() => table.remove(2, 99)).toThrow(/row 2 is not in the table/)
    table.clear()
    expect(rowsOf(table, 99)).toEqual([])
    expect(table.size).toBe(0)
  })
})
