import { randomUUID } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { VectorHit, VectorPayload, VectorRecord, VectorStore } from '../../src/providers/vector-store/port.js'

/** A 4-dimensional unit vector from its components (each test picks vectors whose cosines are known by hand). */
function vec(...xs: number[]): Float32Array {
  return Float32Array.from(xs)
}

/** `xs` scaled to unit length. */
function unit(...xs: number[]): Float32Array {
  const n = Math.hypot(...xs)
  return Float32Array.from(xs, (x) => x / n)
}

function chunk(id: string, vector: Float32Array, extra: Record<string, unknown> = {}): VectorRecord {
  const docId = id.split('#')[0]!
  return { id, vector, payload: { doc_id: docId, text: `text of ${id}`, ...extra } }
}

async function collect(store: VectorStore, collection: string): Promise<{ id: string; payload: VectorPayload }[]> {
  const out: { id: string; payload: VectorPayload }[] = []
  for await (const row of store.scroll(collection)) out.push(row)
  return out
}

function summary(hits: VectorHit[]): [string, number][] {
  return hits.map((h) => [h.id, Number(h.score.toFixed(5))])
}

/**
 * The promises of `VectorStore` (src/providers/vector-store/port.ts), one `it` each, run against one
 * implementation. `make` returns a fresh store; every test works in its own collection and drops it.
 */
export function describeVectorStoreContract(name: string, make: () => VectorStore | Promise<VectorStore>): void {
  describe(`VectorStore contract: ${name}`, () => {
    let store: VectorStore
    let created: string[] = []
    const run = randomUUID().slice(0, 8)

    beforeEach(async () => {
      store = await make()
      created = []
    })
    afterEach(async () => {
      try {
        for (const collection of created) await store.dropCollection(collection)
      } finally {
        await store.close()
      }
    })

    /** A collection name unique to this run and test, dropped when the test ends. */
    async function fresh(label: string, dims = 4): Promise<string> {
      const collection = `contract_${run}_${label}`
      created.push(collection)
      await store.ensureCollection(collection, dims)
      return collection
    }

    it('ensureCollection creates a missing collection, empty', async () => {
      const c = await fresh('creates')
      expect(await store.count(c)).toBe(0)
      expect(await store.search(c, vec(1, 0, 0, 0), 10)).toEqual([])
      await store.write(c, { upsert: [chunk('a#0', vec(1, 0, 0, 0))] })
      expect(await store.count(c)).toBe(1)
    })

    it('ensureCollection is idempotent: a second call with the same dimension keeps the data', async () => {
      const c = await fresh('idempotent')
      await store.write(c, { upsert: [chunk('a#0', vec(1, 0, 0, 0))] })
      await store.ensureCollection(c, 4)
      expect(await store.count(c)).toBe(1)
      expect((await collect(store, c)).map((r) => r.id)).toEqual(['a#0'])
    })

    it('ensureCollection with another dimension throws', async () => {
      const c = await fresh('dims')
      await expect(store.ensureCollection(c, 8)).rejects.toThrow()
      // the existing collection is untouched
      await store.write(c, { upsert: [chunk('a#0', vec(0, 1, 0, 0))] })
      expect(await store.count(c)).toBe(1)
    })

    it('write applies its deletes first, then its upserts', async () => {
      const c = await fresh('delete-then-upsert')
      await store.write(c, {
        upsert: [chunk('d1#0', vec(1, 0, 0, 0)), chunk('d1#1', vec(0, 1, 0, 0)), chunk('d2#0', vec(0, 0, 1, 0))]
      })
      // re-ingest of d1 with one chunk fewer: the old d1#1 must go, the new d1#0 must stay
      await store.write(c, { deleteDocIds: ['d1'], upsert: [chunk('d1#0', vec(0, 0, 0, 1), { version: 2 })] })
      const rows = await collect(store, c)
      expect(rows.map((r) => r.id)).toEqual(['d1#0', 'd2#0'])
      expect(rows[0]!.payload).toEqual({ doc_id: 'd1', text: 'text of d1#0', version: 2 })
      expect(await store.count(c)).toBe(2)
    })

    it('deleteDocIds removes every record of those documents and no other', async () => {
      const c = await fresh('delete-doc')
      await store.write(c, {
        upsert: [chunk('x#0', vec(1, 0, 0, 0)), chunk('x#1', vec(0, 1, 0, 0)), chunk('y#0', vec(0, 0, 1, 0)), chunk('z#0', vec(0, 0, 0, 1))]
      })
      await store.write(c, { deleteDocIds: ['x', 'z'] })
      expect((await collect(store, c)).map((r) => r.id)).toEqual(['y#0'])
      const hits = await store.search(c, vec(1, 0, 0, 0), 10)
      expect(hits.map((h) => h.id)).toEqual(['y#0'])
    })

    it('re-upserting an id replaces its vector and payload', async () => {
      const c = await fresh('replace')
      await store.write(c, { upsert: [chunk('r#0', vec(1, 0, 0, 0), { title: 'old' })] })
      await store.write(c, { upsert: [chunk('r#0', vec(0, 1, 0, 0), { title: 'new' })] })
      expect(await store.count(c)).toBe(1)
      const hits = await store.search(c, vec(0, 1, 0, 0), 10)
      expect(summary(hits)).toEqual([['r#0', 1]])
      expect(hits[0]!.payload).toEqual({ doc_id: 'r', text: 'text of r#0', title: 'new' })
    })

    it('re-upserting an id under another doc id moves it to that document', async () => {
      const c = await fresh('move-doc')
      await store.write(c, { upsert: [{ id: 'shared', vector: vec(1, 0, 0, 0), payload: { doc_id: 'A', text: 't' } }] })
      await store.write(c, { upsert: [{ id: 'shared', vector: vec(1, 0, 0, 0), payload: { doc_id: 'B', text: 't' } }] })
      await store.write(c, { deleteDocIds: ['A'] })
      expect(await store.count(c)).toBe(1)
      await store.write(c, { deleteDocIds: ['B'] })
      expect(await store.count(c)).toBe(0)
    })

    it('deleting a doc id that has no record is not an error', async () => {
      const c = await fresh('delete-unknown')
      await store.write(c, { upsert: [chunk('k#0', vec(1, 0, 0, 0))] })
      await expect(store.write(c, { deleteDocIds: ['never-stored'] })).resolves.toBeUndefined()
      expect(await store.count(c)).toBe(1)
    })

    it('search returns at most limit hits, best first by cosine similarity', async () => {
      const c = await fresh('order')
      // cosines with q = (1,0,0,0) by hand: a 1, b 0.6, c 0, d -1, e 0.8
      await store.write(c, {
        upsert: [
          chunk('a#0', vec(1, 0, 0, 0)),
          chunk('b#0', vec(0.6, 0.8, 0, 0)),
          chunk('c#0', vec(0, 0, 1, 0)),
          chunk('d#0', vec(-1, 0, 0, 0)),
          chunk('e#0', vec(0.8, 0, 0, 0.6))
        ]
      })
      const all = await store.search(c, vec(1, 0, 0, 0), 10)
      expect(summary(all)).toEqual([
        ['a#0', 1],
        ['e#0', 0.8],
        ['b#0', 0.6],
        ['c#0', 0],
        ['d#0', -1]
      ])
      const top2 = await store.search(c, vec(1, 0, 0, 0), 2)
      expect(summary(top2)).toEqual([
        ['a#0', 1],
        ['e#0', 0.8]
      ])
      expect(await store.search(c, vec(1, 0, 0, 0), 0)).toEqual([])
      // a query off the axes: q = (0.6, 0.8, 0, 0); b 1, a 0.6, e 0.48, c 0, d -0.6
      const off = await store.search(c, vec(0.6, 0.8, 0, 0), 3)
      expect(summary(off)).toEqual([
        ['b#0', 1],
        ['a#0', 0.6],
        ['e#0', 0.48]
      ])
    })

    it('search hits carry the stored payload', async () => {
      const c = await fresh('payload')
      const payload = { doc_id: 'guide-cough', text: '咳嗽三周以上', chunk_index: 3, title: '咳嗽', tags: ['a', 'b'], nested: { k: 1 } }
      await store.write(c, { upsert: [{ id: 'guide-cough#3', vector: vec(0, 0, 1, 0), payload }] })
      const [hit] = await store.search(c, vec(0, 0, 1, 0), 1)
      expect(hit).toBeDefined()
      expect(hit!.id).toBe('guide-cough#3')
      expect(hit!.payload).toEqual(payload)
    })

    it('search orders equal scores by id ascending, also across the limit', async () => {
      const c = await fresh('ties')
      // five records with the same vector, written in an order that is neither ascending nor descending
      const same = vec(0, 0.6, 0.8, 0)
      await store.write(c, {
        upsert: ['t#3', 't#1', 't#4', 't#0', 't#2'].map((id) => chunk(id, same))
      })
      await store.write(c, { upsert: [chunk('u#0', vec(0, 1, 0, 0))] })
      const hits = await store.search(c, vec(0, 1, 0, 0), 4)
      expect(summary(hits)).toEqual([
        ['u#0', 1],
        ['t#0', 0.6],
        ['t#1', 0.6],
        ['t#2', 0.6]
      ])
    })

    it('search on a missing collection gives [], not an error', async () => {
      expect(await store.search(`contract_${run}_missing`, vec(1, 0, 0, 0), 10)).toEqual([])
    })

    it('scroll yields every id and payload, without vectors, in id order', async () => {
      const c = await fresh('scroll')
      const ids = ['m#2', 'a#10', 'a#9', 'z#0', 'b#1', 'a#1']
      await store.write(c, { upsert: ids.map((id, i) => chunk(id, unit(1, i, 0, 0), { i })) })
      const rows = await collect(store, c)
      // id order is code-unit order of the strings: 'a#10' < 'a#9'
      expect(rows.map((r) => r.id)).toEqual(['a#1', 'a#10', 'a#9', 'b#1', 'm#2', 'z#0'])
      expect(rows.find((r) => r.id === 'a#9')).toEqual({ id: 'a#9', payload: { doc_id: 'a', text: 'text of a#9', i: 2 } })
      for (const row of rows) expect(Object.keys(row).sort()).toEqual(['id', 'payload'])
    })

    it('scroll pages through a collection larger than one page', async () => {
      const c = await fresh('scroll-many')
      const ids = Array.from({ length: 600 }, (_, i) => `p#${String(i).padStart(4, '0')}`)
      await store.write(c, { upsert: [...ids].reverse().map((id) => chunk(id, vec(0, 0, 0, 1))) })
      expect((await collect(store, c)).map((r) => r.id)).toEqual(ids)
      expect(await store.count(c)).toBe(600)
    })

    it('scroll on a missing collection yields nothing', async () => {
      expect(await collect(store, `contract_${run}_missing_scroll`)).toEqual([])
    })

    it('count is the number of records; a missing collection counts 0', async () => {
      const c = await fresh('count')
      await store.write(c, { upsert: [chunk('c#0', vec(1, 0, 0, 0)), chunk('c#1', vec(0, 1, 0, 0)), chunk('d#0', vec(0, 0, 1, 0))] })
      await store.write(c, { upsert: [chunk('c#1', vec(0, 0, 0, 1))] })
      expect(await store.count(c)).toBe(3)
      expect(await store.count(`contract_${run}_missing_count`)).toBe(0)
    })

    it('collections are independent of each other', async () => {
      const c1 = await fresh('indep-1')
      const c2 = await fresh('indep-2', 2)
      await store.write(c1, { upsert: [chunk('same#0', vec(1, 0, 0, 0))] })
      await store.write(c2, { upsert: [{ id: 'same#0', vector: vec(0, 1), payload: { doc_id: 'other', text: 'two dims' } }] })
      await store.write(c1, { deleteDocIds: ['same'] })
      expect(await store.count(c1)).toBe(0)
      const [hit] = await store.search(c2, vec(0, 1), 5)
      expect(hit?.payload).toEqual({ doc_id: 'other', text: 'two dims' })
    })

    it('dropCollection removes the collection and its data; dropping a missing one is not an error', async () => {
      const c = `contract_${run}_drop`
      created.push(c)
      await store.ensureCollection(c, 4)
      await store.write(c, { upsert: [chunk('g#0', vec(1, 0, 0, 0))] })
      await store.dropCollection(c)
      expect(await store.count(c)).toBe(0)
      expect(await store.search(c, vec(1, 0, 0, 0), 5)).toEqual([])
      expect(await collect(store, c)).toEqual([])
      await expect(store.dropCollection(c)).resolves.toBeUndefined()
      // a dropped name can be created again, empty, even with another dimension
      await store.ensureCollection(c, 2)
      expect(await store.count(c)).toBe(0)
    })

    it('health reports the backend as reachable', async () => {
      const health = await store.health()
      expect(health.ok).toBe(true)
      expect(health.backend).toBe(`vector-store:${store.backend}`)
      expect(health.latency_ms).toBeGreaterThanOrEqual(0)
    })
  })
}
