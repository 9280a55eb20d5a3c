import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { pagesFor, WASM_PAGE_BYTES } from '../../src/providers/vector-store/dot-kernel.js'
import { EmbeddedVectorStore } from '../../src/providers/vector-store/embedded.js'
import { Int8RowPool } from '../../src/providers/vector-store/int8-row-pool.js'
import { RowPool } from '../../src/providers/vector-store/row-pool.js'
import { toUnit } from '../../src/providers/vector-store/log-codec.js'

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

describe('a pool whose rows were all given back', () => {
  it('holds its first memory again, and takes and scores rows as a new one', () => {
    const pool = new RowPool(500, 504)
    const first = pool.memory.buffer.byteLength
    const rows = Array.from({ length: 2000 }, (_, n) => pool.acquire(vector(500, n), 0, `text ${n}`))
    expect(pool.memory.buffer.byteLength).toBeGreaterThan(first * 50)
    for (const row of rows) pool.release(row)
    pool.shrinkWhenEmpty()
    expect(pool.memory.buffer.byteLength).toBe(first)
    expect(pool.live).toBe(0)
    const again = Array.from({ length: 40 }, (_, n) => pool.acquire(vector(500, 5000 + n), 0))
    expect(new Set(again).size).toBe(40)
    for (let n = 0; n < 40; n++) expect([...pool.row(again[n]!)]).toEqual([...vector(500, 5000 + n)])
    expect(pool.textOf(again[0]!)).toBeUndefined()
    pool.score(vector(500, 5039), again)
    expect(pool.scores[again[39]!]).toBeCloseTo(1, 5)
    // a vector held before the shrink is not found again: it is a new row
    expect(pool.acquire(vector(500, 3), 0)).not.toBe(pool.acquire(vector(500, 5000), 0))
  })

  it('keeps its memory while one record still holds a row', () => {
    const pool = new RowPool(8, 8)
    const rows = Array.from({ length: 500 }, (_, n) => pool.acquire(vector(8, n), 0))
    const bytes = pool.memory.buffer.byteLength
    for (const row of rows.slice(1)) pool.release(row)
    pool.shrinkWhenEmpty()
    expect(pool.memory.buffer.byteLength).toBe(bytes)
    expect([...pool.row(rows[0]!)]).toEqual([...vector(8, 0)])
  })

  it('on int8 rows too: the search scores of rows taken after it are exact', () => {
    const dir = mkdtempSync(join(tmpdir(), 'recall-int8-shrink-'))
    try {
      const pool = new Int8RowPool(64, 64, 4, dir)
      const first = pool.memory.buffer.byteLength
      const rows = Array.from({ length: 3000 }, (_, n) => pool.acquire(vector(64, n), 0))
      expect(pool.memory.buffer.byteLength).toBeGreaterThan(first)
      for (const row of rows) pool.release(row)
      pool.shrinkWhenEmpty()
      expect(pool.memory.buffer.byteLength).toBe(first)
      const again = Array.from({ length: 10 }, (_, n) => pool.acquire(vector(64, 7000 + n), 0))
      expect([...pool.exactScores(vector(64, 7003), again)].map((x) => Math.round(x * 1e5) / 1e5)[3]).toBe(1)
      pool.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it.each(['float32', 'int8'] as const)('a %s store of the default namespace reads and writes as before once every partition was dropped', async (precision) => {
    const dir = mkdtempSync(join(tmpdir(), 'recall-pool-drop-'))
    try {
      const store = new EmbeddedVectorStore({ dir, precision })
      for (const c of ['a', 'b']) {
        await store.ensureCollection(c, 64)
        await store.write(c, 'default', { upsert: Array.from({ length: 300 }, (_, n) => ({ id: `${c}${n}`, vector: vector(64, n), payload: { doc_id: c, text: `${c}${n}` } })) })
      }
      await store.dropNamespace('a', 'default')
      expect((await store.search('b', 'default', vector(64, 7), 1))[0]?.id).toBe('b7')
      await store.dropNamespace('b', 'default')
      await store.write('a', 'default', { upsert: [{ id: 'x', vector: vector(64, 7), payload: { doc_id: 'x', text: 'x' } }] })
      expect(await store.search('a', 'default', vector(64, 7), 5)).toEqual([{ id: 'x', score: 1, payload: { doc_id: 'x', text: 'x' } }])
      expect(await store.count('b', 'default')).toBe(0)
      await store.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('rows that share a hash', () => {
  // acquire takes the hash a snapshot recorded; the same hash for distinct vectors is what a collision looks like
  it.each([
    ['float32', () => new RowPool(16, 16)],
    ['int8', () => new Int8RowPool(16, 16, 4, mkdtempSync(join(tmpdir(), 'recall-hash-')))]
  ] as const)('%s: distinct vectors of one hash take distinct rows, equal ones share, and a release keeps the others found', (_, make) => {
    const pool = make()
    const [a, b, c] = [vector(16, 1), vector(16, 2), vector(16, 3)]
    const ra = pool.acquire(a, 0, undefined, 7)
    const rb = pool.acquire(b, 0, undefined, 7)
    expect(rb).not.toBe(ra)
    expect(pool.acquire(a, 0, undefined, 7)).toBe(ra)
    const rc = pool.acquire(c, 0, undefined, 7)
    expect(new Set([ra, rb, rc]).size).toBe(3)
    pool.release(rb)
    expect(pool.acquire(a, 0, undefined, 7)).toBe(ra)
    expect(pool.acquire(c, 0, undefined, 7)).toBe(rc)
    // a has three holders, c two: both still found once their last row-mate of the hash is gone
    pool.release(rc)
    pool.release(rc)
    expect(pool.acquire(a, 0, undefined, 7)).toBe(ra)
    expect(pool.live).toBe(1)
    for (let i = 0; i < 4; i++) pool.release(ra)
    expect(pool.live).toBe(0)
    // every row free: b comes back as a new holder of a row with its own floats
    const again = pool.acquire(b, 0, undefined, 7)
    expect([...pool.row(again)]).toEqual([...b])
    expect(pool.acquire(b, 0, undefined, 7)).toBe(again)
    pool.close()
  })
})

describe('rows taken for a whole snapshot at once (acquireAll)', () => {
  // 64 dimensions: past the 32 int8 values an int8 pool compares before the floats
  const dims = 64
  /** `v` with one float past the first 32 moved by the smallest step: same scale, same first int8 values, other floats. */
  const nudged = (v: Float32Array): Float32Array => {
    const out = v.slice()
    const at = 50 + (out.indexOf(Math.max(...out.map(Math.abs))) === 50 ? 1 : 0)
    const bits = new Int32Array(out.buffer)
    bits[at]! += 1
    return out
  }
  it.each([
    ['float32', () => new RowPool(dims, dims)],
    ['int8', () => new Int8RowPool(dims, dims, 4, mkdtempSync(join(tmpdir(), 'recall-all-')))]
  ] as const)('%s: two vectors share a row exactly when their floats are equal, whatever hashes the snapshot gave', (_, make) => {
    const pool = make()
    const held = [vector(dims, 1), vector(dims, 2), vector(dims, 3)]
    const heldRows = held.map((v) => pool.acquire(v, 0))
    // as a snapshot might give them: held vectors, nudged copies of held ones (before and after the held one in the batch),
    // repeats within the batch, a nudged copy of a vector first seen in the batch, new vectors
    const fresh = vector(dims, 40)
    const batch = [held[0]!, nudged(held[1]!), held[1]!, fresh, nudged(fresh), fresh, vector(dims, 41), held[0]!, nudged(held[2]!), held[2]!]
    const source = new Float32Array(batch.length * dims)
    batch.forEach((v, i) => source.set(v, i * dims))
    const honest = (v: Float32Array): number => new Uint32Array(v.buffer).reduce((h, x) => Math.imul(h ^ x, 0x01000193) >>> 0, 0x811c9dc5)
    // each vector given the hash of its un-nudged original (a collision), or one hash for all (a wrong one)
    const variants = [batch.map((v) => honest(v)), batch.map((_, i) => honest(batch[i === 1 ? 2 : i === 4 ? 3 : i === 8 ? 9 : i]!)), batch.map(() => 7)]
    for (const [variant, hashes] of variants.entries()) {
      const rows = pool.acquireAll(source, batch.length, Uint32Array.from(hashes))
      for (let i = 0; i < batch.length; i++) {
        expect([...pool.row(rows[i]!)]).toEqual([...batch[i]!])
        for (let j = 0; j < batch.length; j++) {
          const same = batch[i]!.every((x, d) => Object.is(x, batch[j]![d]))
          expect(rows[i] === rows[j], `${i} and ${j}`).toBe(same)
        }
        // a row held before is found under its own hash only (a wrong hash costs sharing, never a wrong row)
        const k = held.findIndex((v) => v.every((x, d) => x === batch[i]![d]))
        if (k >= 0 && variant < 2) expect(rows[i]).toBe(heldRows[k])
      }
      // every holder counted: the rows are free once each is let go as often as it was taken
      for (const row of rows) pool.release(row)
    }
    for (const row of heldRows) pool.release(row)
    expect(pool.live).toBe(0)
    pool.close()
  })
})

describe('a log replayed at open, whose vectors share a hash with other rows', () => {
  /** FNV-1a over the floats' bits (the pool's hash, as its comment defines it). */
  const fnv = (v: Float32Array): number => new Uint32Array(v.buffer, v.byteOffset, v.length).reduce((h, x) => Math.imul(h ^ x, 0x01000193) >>> 0, 0x811c9dc5)
  /** Two distinct unit vectors of four positive floats with one hash (a birthday search, about 2^16 draws). */
  function collision(): [Float32Array, Float32Array] {
    const seen = new Map<number, Float32Array>()
    let s = 7
    const random = (): number => (s = (Math.imul(s, 48271) >>> 0) % 2147483647) / 2147483647
    for (;;) {
      const raw = Float32Array.from({ length: 4 }, () => 0.05 + random())
      const v = toUnit(raw, 'draw')
      const h = fnv(v)
      const other = seen.get(h)
      if (other && other.some((x, d) => x !== v[d])) return [other, v]
      seen.set(h, v)
    }
  }

  it.each(['int8', 'float32'] as const)('%s: every record reads its own vector after a restart, the colliding ones too', async (precision) => {
    const [a, b] = collision()
    const c = toUnit(Float32Array.of(1, 2, 3, 4), 'c')
    const dir = mkdtempSync(join(tmpdir(), 'recall-replay-'))
    try {
      const open = () => new EmbeddedVectorStore({ dir, precision, compactionFloorBytes: 1e12 })
      const first = open()
      await first.ensureCollection('chunks', 4)
      await first.ensureCollection('facets', 4)
      const record = (id: string, vector: Float32Array) => ({ id, vector, payload: { doc_id: id, text: id } })
      await first.write('chunks', 'default', { upsert: [record('x', a)] })
      // in the log: y first shares a's hash, then is written again; z keeps b; w is b and then deleted
      await first.write('facets', 'default', { upsert: [record('y', b), record('z', b), record('w', b)] })
      await first.write('facets', 'default', { upsert: [record('y', c)] })
      await first.write('facets', 'default', { deleteDocIds: ['w'] })
      await first.close()
      const again = open()
      // the chunks' row of a first, as a start-up that reads the chunks before the Facets holds it
      expect([...(await again.vectorsOf('chunks', 'default', ['x'])).get('x')!]).toEqual([...a])
      const facets = await again.vectorsOf('facets', 'default', ['y', 'z', 'w'])
      expect([...facets.keys()].sort()).toEqual(['y', 'z'])
      expect([...facets.get('z')!]).toEqual([...b])
      expect([...facets.get('y')!]).toEqual([...c])
      // b's row is found again for an equal vector: a write of b now shares it rather than taking another
      await again.write('facets', 'default', { upsert: [record('v', b)] })
      expect([...(await again.vectorsOf('facets', 'default', ['v'])).get('v')!]).toEqual([...b])
      await again.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('rows read together', () => {
  it.each([
    ['float32', (dims: number) => new RowPool(dims, dims)],
    ['int8', (dims: number) => new Int8RowPool(dims, dims, 4, mkdtempSync(join(tmpdir(), 'recall-gather-')))]
  ] as const)('%s: rowsInto and rowsIntoAsync give each row\'s floats as row() does, in the order asked, runs and scattered rows alike', async (_, make) => {
    const dims = 24
    const pool = make(dims)
    // 3,000 rows: runs, gaps wider than a gathering read takes in, rows far apart, the last rows still gathered for a write
    const rows = Array.from({ length: 3000 }, (_, n) => pool.acquire(vector(dims, n), 0))
    const asked = [
      ...rows.slice(100, 400), rows[2999]!, rows[0]!, rows[17]!, rows[17]!, ...rows.slice(1000, 3000).filter((_, i) => i % 40 === 0),
      rows[2998]!, ...rows.slice(400, 2100).reverse(), rows[1500]!
    ]
    for (const [from, to] of [[0, asked.length], [5, 305], [300, 330], [7, 7]] as const) {
      const into = new Float32Array((to - from) * dims).fill(Number.NaN)
      pool.rowsInto(asked, from, to, into)
      const expected = new Float32Array((to - from) * dims)
      for (let i = from; i < to; i++) expected.set(pool.row(asked[i]!), (i - from) * dims)
      expect(Buffer.from(into.buffer).equals(Buffer.from(expected.buffer))).toBe(true)
      const later = new Float32Array((to - from) * dims).fill(Number.NaN)
      // a row written while the read is under way (the last rows are gathered for a write, not yet in the file)
      const reading = pool.rowsIntoAsync(asked, from, to, later)
      pool.acquire(vector(dims, 5000 + from), 0)
      await reading
      expect(Buffer.from(later.buffer).equals(Buffer.from(expected.buffer))).toBe(true)
    }
    pool.close()
  })
})
