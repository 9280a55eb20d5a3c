import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { EmbeddedVectorStore } from '../../src/providers/vector-store/embedded.js'
import type { VectorRecord } from '../../src/providers/vector-store/port.js'

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

async function store(): Promise<EmbeddedVectorStore> {
  const dir = mkdtempSync(join(tmpdir(), 'recall-vector-checks-'))
  dirs.push(dir)
  const s = new EmbeddedVectorStore({ dir })
  await s.ensureCollection('docs', 3)
  return s
}

const rec = (id: string, vector: number[]): VectorRecord => ({ id, vector: new Float32Array(vector), payload: { doc_id: id, text: id } })

describe('the embedded vector store\'s checks of a write\'s vectors', () => {
  it('refuses a write with a non-finite component, naming the record and the component, and writes none of it', async () => {
    const s = await store()
    for (const bad of [Number.NaN, Infinity, -Infinity]) {
      await expect(s.write('docs', 'default', { upsert: [rec('a', [1, 0, 0]), rec('b', [0, 1, bad])] }))
        .rejects.toThrow(new RangeError('record b vector has a non-finite component at 2'))
    }
    expect(await s.count('docs', 'default')).toBe(0)
    await expect(s.search('docs', 'default', new Float32Array([Number.NaN, 0, 0]), 1)).rejects.toThrow(new RangeError('query vector has a non-finite component at 0'))
    await s.close()
  })

  it('keeps each vector scaled to unit length and a zero vector zero', async () => {
    const s = await store()
    await s.write('docs', 'default', { upsert: [rec('a', [3, 4, 0]), rec('z', [0, 0, 0]), rec('c', [0, 0, -2])] })
    const hits = await s.search('docs', 'default', new Float32Array([1, 0, 0]), 3)
    const score = Object.fromEntries(hits.map((h) => [h.id, h.score]))
    // cosines: 3/5 for a, 0 for the zero vector and for c
    expect(score['a']).toBeCloseTo(0.6, 6)
    expect(score['z']).toBe(0)
    expect(score['c']).toBe(0)
    // c, scaled by 1/2, is the query's direction exactly
    const down = await s.search('docs', 'default', new Float32Array([0, 0, -7]), 1)
    expect(down.map((h) => [h.id, h.score])).toEqual([['c', 1]])
    await s.close()
  })
})
