import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { EmbeddedVectorStore } from '../../src/providers/vector-store/embedded.js'
import type { VectorRank, VectorRecord } from '../../src/providers/vector-store/port.js'
import { describeVectorStoreContract } from '../contracts/vector-store.contract.js'

const dirs: string[] = []
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'recall-int8-'))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

describeVectorStoreContract('embedded, int8 with float rescoring', () => new EmbeddedVectorStore({ dir: tempDir(), precision: 'int8' }))

/** A seeded uniform in [-1, 1) (a linear congruential generator), so every run draws the same vectors. */
function generator(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0
    return s / 2 ** 31 - 1
  }
}

/** `count` vectors of `dims`, each with a shared offset (as a text model's vectors crowd one side) and noise. */
function crowded(count: number, dims: number, seed: number): Float32Array[] {
  const random = generator(seed)
  const centre = Array.from({ length: dims }, () => random())
  return Array.from({ length: count }, () => Float32Array.from(centre, (c) => c * 0.8 + random()))
}

function rec(id: string, vector: Float32Array): VectorRecord {
  return { id, vector, payload: { doc_id: id.split('#')[0]!, text: id } }
}

/** The test's own answer: cosine in float64 over every record, best first, ties by id; the `k` best. */
function bruteForce(records: readonly { id: string; vector: Float32Array }[], query: Float32Array, k: number): { id: string; score: number }[] {
  const norm = (v: Float32Array): number => Math.sqrt(v.reduce((s, x) => s + x * x, 0))
  const q = norm(query)
  return records
    .map(({ id, vector }) => ({ id, score: vector.reduce((s, x, i) => s + x * query[i]!, 0) / (norm(vector) * q) }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
    .slice(0, k)
}

/** The int8 estimate as the test works it out: each vector's largest magnitude at 127, rounded, integer dot product. */
function int8Estimate(a: Float32Array, b: Float32Array): number {
  const quantise = (v: Float32Array): number[] => {
    const max = Math.max(...v.map(Math.abs))
    return Array.from(v, (x) => Math.round((x * 127) / max))
  }
  const qa = quantise(a)
  const qb = quantise(b)
  const scaleA = Math.max(...a.map(Math.abs)) / 127
  return qa.reduce((s, x, i) => s + x * qb[i]!, 0) * scaleA
}

function expectSameAnswer(got: VectorRank[], expected: { id: string; score: number }[]): void {
  expect(got.map((h) => h.id)).toEqual(expected.map((h) => h.id))
  got.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i]!.score, 6))
}

describe('int8 vectors with float rescoring', () => {
  const DIMS = 96
  const vectors = crowded(2500, DIMS, 11)
  const records = vectors.map((vector, i) => ({ id: `d${Math.floor(i / 5)}#${i % 5}`, vector }))
  const queries = crowded(25, DIMS, 23)
  const K = 10

  it('gives the brute-force float top k, before and after a restart, and the float32 store\'s scores to the bit', async () => {
    const dir = tempDir()
    let store = new EmbeddedVectorStore({ dir, precision: 'int8' })
    await store.ensureCollection('c', DIMS)
    for (let at = 0; at < records.length; at += 100) {
      await store.write('c', 'default', { upsert: records.slice(at, at + 100).map((r) => rec(r.id, r.vector)) })
    }
    const floatDir = tempDir()
    const float32 = new EmbeddedVectorStore({ dir: floatDir })
    await float32.ensureCollection('c', DIMS)
    await float32.write('c', 'default', { upsert: records.map((r) => rec(r.id, r.vector)) })

    for (const query of queries) {
      const expected = bruteForce(records, query, K + 1)
      // the case is decided: no two scores around the k-th place are closer than float32 rounding
      expect(expected[K - 1]!.score - expected[K]!.score).toBeGreaterThan(1e-5)
      expectSameAnswer(await store.rank('c', 'default', query, K), expected.slice(0, K))
      expect(await store.rank('c', 'default', query, K)).toEqual(await float32.rank('c', 'default', query, K))
    }
    await store.close()

    store = new EmbeddedVectorStore({ dir, precision: 'int8' })
    for (const query of queries.slice(0, 8)) expectSameAnswer(await store.rank('c', 'default', query, K), bruteForce(records, query, K))
    // the vectors read back are the float32 ones written
    const back = await store.vectorsOf('c', 'default', [records[7]!.id])
    expect(back.get(records[7]!.id)).toEqual(await float32.vectorsOf('c', 'default', [records[7]!.id]).then((m) => m.get(records[7]!.id)))
    await store.close()
    await float32.close()
    // the float rows' file is gone from the folder once open, and nothing is left behind after close
    expect(readdirSync(dir).filter((name) => name.startsWith('.float-rows'))).toEqual([])
  })

  it('keeps every vector through compactions written off the write queue, as its floats were written', async () => {
    const dir = tempDir()
    // every write's log outgrows the snapshot: each write starts a compaction, its vectors read from the pool's file
    let store = new EmbeddedVectorStore({ dir, precision: 'int8', compactionFloorBytes: 0 })
    await store.ensureCollection('c', DIMS)
    for (let at = 0; at < records.length; at += 250) {
      await store.write('c', 'default', { upsert: records.slice(at, at + 250).map((r) => rec(r.id, r.vector)) })
    }
    await store.close()
    store = new EmbeddedVectorStore({ dir, precision: 'int8' })
    const back = await store.vectorsOf('c', 'default', records.map((r) => r.id))
    for (const { id, vector } of records) {
      const norm = Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0))
      const got = back.get(id)!
      vector.forEach((x, i) => expect(got[i]).toBeCloseTo(x / norm, 6))
    }
    await store.close()
  })

  it('rescoring decides: with no oversampling the int8 order can lose the best hit, with it the hit is back', async () => {
    // a query and two records whose int8 estimates are in the other order than their cosines, found by the test's own
    // quantisation
    const random = generator(5)
    const dims = 24
    const draw = (): Float32Array => Float32Array.from({ length: dims }, () => random())
    const unit = (v: Float32Array): Float32Array => v.map((x) => x / Math.sqrt(v.reduce((s, y) => s + y * y, 0)))
    let found: { query: Float32Array; a: Float32Array; b: Float32Array } | undefined
    for (let tries = 0; tries < 200_000 && !found; tries++) {
      const query = unit(draw())
      const a = unit(draw())
      const b = unit(Float32Array.from(a, (x) => x + (random() * 0.02)))
      const exact = (v: Float32Array): number => v.reduce((s, x, i) => s + x * query[i]!, 0)
      if (exact(a) - exact(b) > 1e-4 && int8Estimate(b, query) - int8Estimate(a, query) > 1e-4) found = { query, a, b }
    }
    expect(found).toBeDefined()
    const { query, a, b } = found!
    const expected = bruteForce([{ id: 'a#0', vector: a }, { id: 'b#0', vector: b }], query, 1)
    expect(expected[0]!.id).toBe('a#0')

    const once = new EmbeddedVectorStore({ dir: tempDir(), precision: 'int8', oversample: 1 })
    await once.ensureCollection('c', dims)
    await once.write('c', 'default', { upsert: [rec('a#0', a), rec('b#0', b)] })
    const [lost] = await once.rank('c', 'default', query, 1)
    // the int8 scan chose b; its score is still b's exact one
    expect(lost?.id).toBe('b#0')
    expect(lost?.score).toBeCloseTo(bruteForce([{ id: 'b#0', vector: b }], query, 1)[0]!.score, 6)
    await once.close()

    const twice = new EmbeddedVectorStore({ dir: tempDir(), precision: 'int8', oversample: 2 })
    await twice.ensureCollection('c', dims)
    await twice.write('c', 'default', { upsert: [rec('a#0', a), rec('b#0', b)] })
    expectSameAnswer(await twice.rank('c', 'default', query, 1), expected)
    await twice.close()
  })

  it('shares rows between collections, gives them back on delete and drop, and grows without losing a scale', async () => {
    const store = new EmbeddedVectorStore({ dir: tempDir(), precision: 'int8' })
    await store.ensureCollection('chunks', DIMS)
    await store.ensureCollection('facets', DIMS)
    const first = records.slice(0, 600)
    await store.write('chunks', 'default', { upsert: first.map((r) => rec(r.id, r.vector)) })
    // the same vectors under other ids in a second collection (as derived Episodes take their chunk's vector)
    await store.write('facets', 'default', { upsert: first.slice(0, 300).map((r) => rec(`f-${r.id}`, r.vector)) })
    // replace half the chunks' documents with new vectors: rows are freed and used again
    const replaced = first.map((r, i) => (i % 2 === 0 ? { id: r.id, vector: records[1000 + i]!.vector } : r))
    const doomed = [...new Set(first.filter((_, i) => i % 2 === 0).map((r) => r.id.split('#')[0]!))]
    await store.write('chunks', 'default', { deleteDocIds: doomed, upsert: replaced.filter((_, i) => i % 2 === 0).map((r) => rec(r.id, r.vector)) })
    const chunksNow = replaced.filter((r, i) => i % 2 === 0 || !doomed.includes(r.id.split('#')[0]!))
    await store.dropCollection('facets')
    for (const query of queries.slice(0, 10)) {
      expectSameAnswer(await store.rank('chunks', 'default', query, K), bruteForce(chunksNow, query, K))
    }
    await store.close()
  })
})

describe('a namespace\'s pool', () => {
  it('stays open while an empty partition uses it, after the last rows of another partition are dropped', async () => {
    const DIMS = 8
    const vectors = crowded(30, DIMS, 3)
    const store = new EmbeddedVectorStore({ dir: tempDir(), precision: 'int8' })
    await store.ensureCollection('a', DIMS)
    await store.ensureCollection('b', DIMS)
    await store.write('a', 'default', { upsert: [rec('x#0', vectors[0]!)] })
    await store.write('a', 'default', { deleteDocIds: ['x'] })
    await store.write('b', 'default', { upsert: vectors.slice(1, 10).map((v, i) => rec(`b${i}#0`, v)) })
    // the pool now holds no row, but partition a (empty, loaded) still writes into it
    await store.dropCollection('b')
    const records = vectors.slice(10).map((vector, i) => ({ id: `a${i}#0`, vector }))
    await store.write('a', 'default', { upsert: records.map((r) => rec(r.id, r.vector)) })
    expectSameAnswer(await store.rank('a', 'default', vectors[29]!, 5), bruteForce(records, vectors[29]!, 5))
    await store.close()
  })
})

describe('a store written before int8 pools (test/fixtures/vectors-0bee96b)', () => {
  const fixture = fileURLToPath(new URL('../fixtures/vectors-0bee96b/store', import.meta.url))
  // the fixture's vectors, worked out from the formula its README gives
  const DIMS = 12
  const vector = (i: number): Float32Array => Float32Array.from({ length: DIMS }, (_, d) => Math.sin(1.7 * i + 0.61 * d + 0.3) + (d === i % DIMS ? 1.5 : 0))
  const idOf = (i: number): string => `doc${Math.floor(i / 4)}#${i % 4}`
  const inDefault = Array.from({ length: 40 }, (_, i) => i).filter((i) => i < 12 || i > 15).map((i) => ({ id: idOf(i), vector: vector(i) }))
  const inT1 = Array.from({ length: 20 }, (_, i) => ({ id: idOf(40 + i), vector: vector(40 + i) }))

  it.each(['int8', 'float32'] as const)('opens with %s: every record, the deletion in its log, the brute-force answers', async (precision) => {
    const dir = tempDir()
    cpSync(fixture, dir, { recursive: true })
    const store = new EmbeddedVectorStore({ dir, precision })
    const ids: string[] = []
    for await (const row of store.scroll('chunks', 'default')) ids.push(row.id)
    expect(ids).toEqual(inDefault.map((r) => r.id).sort())
    expect(await store.count('chunks', 't1')).toBe(20)
    for (const q of [3, 17, 44, 58]) {
      const query = vector(q + 0.5)
      expectSameAnswer(await store.rank('chunks', 'default', query, 5), bruteForce(inDefault, query, 5))
      expectSameAnswer(await store.rank('chunks', 't1', query, 5), bruteForce(inT1, query, 5))
    }
    // and writes on, in the same format
    await store.write('chunks', 'default', { upsert: [rec('new#0', vector(99))] })
    await store.close()
    const again = new EmbeddedVectorStore({ dir })
    expect((await again.rank('chunks', 'default', vector(99), 1))[0]).toMatchObject({ id: 'new#0' })
    await again.close()
  })
})
