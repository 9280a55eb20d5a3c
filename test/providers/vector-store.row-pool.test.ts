import { describe, expect, it } from 'vitest'
import { pagesFor, WASM_PAGE_BYTES } from '../../src/providers/vector-store/dot-kernel.js'
import { RowPool } from '../../src/providers/vector-store/row-pool.js'

/** A unit vector of `dims` floats, different for each `n`. */
function vector(dims: number, n: number): Float32Array {
  const v = Float32Array.from({ length: dims }, (_, i) => Math.sin(n * 7.1 + i * 0.37) + (i === n % dims ? 2 : 0))
  const norm = Math.hypot(...v)
  return v.map((x) => x / norm)
}

describe('RowPool growth', () => {
  // WebAssembly memory never shrinks: whatever the pool grows to, the process holds until it ends
  it('holds every row it was given while its memory stays within a quarter above what the rows need', () => {
    const dims = 500
    const stride = 504
    const pool = new RowPool(dims, stride)
    const rows: number[] = []
    for (let n = 0; n < 2100; n++) {
      rows.push(pool.acquire(vector(dims, n), 0))
      // each step's bound: the pages for the rows in use and a quarter more (doubling reached 4,096 rows for 2,100)
      expect(pool.memory.buffer.byteLength).toBeLessThanOrEqual(pagesFor(stride, Math.max(16, Math.ceil((n + 1) * 1.25))) * WASM_PAGE_BYTES)
    }
    expect(new Set(rows).size).toBe(2100)
    for (let n = 0; n < 2100; n += 97) expect([...pool.row(rows[n]!)]).toEqual([...vector(dims, n)])
    // scores land where the kernel writes them, after the last row: each row scored against itself is 1
    pool.score(vector(dims, 2099), [rows[2099]!])
    expect(pool.scores[rows[2099]!]).toBeCloseTo(1, 5)
    pool.score(vector(dims, 5), rows)
    expect(pool.scores[rows[5]!]).toBeCloseTo(1, 5)
  })

  it('makes room for a whole batch at once, and a row given back is used again before the pool grows', () => {
    const pool = new RowPool(8, 8)
    pool.reserve(5000)
    expect(pool.capacity).toBeGreaterThanOrEqual(5000)
    const bytes = pool.memory.buffer.byteLength
    const rows = Array.from({ length: 5000 }, (_, n) => pool.acquire(vector(8, n), 0))
    expect(pool.memory.buffer.byteLength).toBe(bytes)
    pool.release(rows[10]!)
    expect(pool.acquire(vector(8, 99_999), 0)).toBe(rows[10])
  })
})
