import { randomUUID } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DEFAULT_NAMESPACE } from '../../src/providers/namespace.js'
import type { VectorHit, VectorPayload, VectorRecord, VectorStore } from '../../src/providers/vector-store/port.js'

/** The namespace of the single-namespace promises: the one a store without namespaces wrote into. */
const NS = DEFAULT_NAMESPACE

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

async function collect(store: VectorStore, collection: string, namespace = NS): Promise<{ id: string; payload: VectorPayload }[]> {
  const out: { id: string; payload: VectorPayload }[] = []
  for await (const row of store.scroll(collection, namespace)) out.push(row)
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
      expect(await store.count(c, NS)).toBe(0)
      expect(await store.search(c, NS, vec(1, 0, 0, 0), 10)).toEqual([])
      await store.write(c, NS, { upsert: [chunk('a#0', vec(1, 0, 0, 0))] })
      expect(await store.count(c, NS)).toBe(1)
    })

    it('ensureCollection is idempotent: a second call with the same dimension keeps the data', async () => {
      const c = await fresh('idempotent')
      await store.write(c, NS, { upsert: [chunk('a#0', vec(1, 0, 0, 0))] })
      await store.ensureCollection(c, 4)
      expect(await store.count(c, NS)).toBe(1)
      expect((await collect(store, c)).map((r) => r.id)).toEqual(['a#0'])
    })

    it('ensureCollection with another dimension throws', async () => {
      const c = await fresh('dims')
      await expect(store.ensureCollection(c, 8)).rejects.toThrow()
      // the existing collection is untouched
      await store.write(c, NS, { upsert: [chunk('a#0', vec(0, 1, 0, 0))] })
      expect(await store.count(c, NS)).toBe(1)
    })

    it('write applies its deletes first, then its upserts', async () => {
      const c = await fresh('delete-then-upsert')
      await store.write(c, NS, {
        upsert: [chunk('d1#0', vec(1, 0, 0, 0)), chunk('d1#1', vec(0, 1, 0, 0)), chunk('d2#0', vec(0, 0, 1, 0))]
      })
      // re-ingest of d1 with one chunk fewer: the old d1#1 must go, the new d1#0 must stay
      await store.write(c, NS, { deleteDocIds: ['d1'], upsert: [chunk('d1#0', vec(0, 0, 0, 1), { version: 2 })] })
      const rows = await collect(store, c)
      expect(rows.map((r) => r.id)).toEqual(['d1#0', 'd2#0'])
      expect(rows[0]!.payload).toEqual({ doc_id: 'd1', text: 'text of d1#0', version: 2 })
      expect(await store.count(c, NS)).toBe(2)
    })

    it('deleteDocIds removes every record of those documents and no other', async () => {
      const c = await fresh('delete-doc')
      await store.write(c, NS, {
        upsert: [chunk('x#0', vec(1, 0, 0, 0)), chunk('x#1', vec(0, 1, 0, 0)), chunk('y#0', vec(0, 0, 1, 0)), chunk('z#0', vec(0, 0, 0, 1))]
      })
      await store.write(c, NS, { deleteDocIds: ['x', 'z'] })
      expect((await collect(store, c)).map((r) => r.id)).toEqual(['y#0'])
      const hits = await store.search(c, NS, vec(1, 0, 0, 0), 10)
      expect(hits.map((h) => h.id)).toEqual(['y#0'])
    })

    it('re-upserting an id replaces its vector and payload', async () => {
      const c = await fresh('replace')
      await store.write(c, NS, { upsert: [chunk('r#0', vec(1, 0, 0, 0), { title: 'old' })] })
      await store.write(c, NS, { upsert: [chunk('r#0', vec(0, 1, 0, 0), { title: 'new' })] })
      expect(await store.count(c, NS)).toBe(1)
      const hits = await store.search(c, NS, vec(0, 1, 0, 0), 10)
      expect(summary(hits)).toEqual([['r#0', 1]])
      expect(hits[0]!.payload).toEqual({ doc_id: 'r', text: 'text of r#0', title: 'new' })
    })

    it('re-upserting an id under another doc id moves it to that document', async () => {
      const c = await fresh('move-doc')
      await store.write(c, NS, { upsert: [{ id: 'shared', vector: vec(1, 0, 0, 0), payload: { doc_id: 'A', text: 't' } }] })
      await store.write(c, NS, { upsert: [{ id: 'shared', vector: vec(1, 0, 0, 0), payload: { doc_id: 'B', text: 't' } }] })
      await store.write(c, NS, { deleteDocIds: ['A'] })
      expect(await store.count(c, NS)).toBe(1)
      await store.write(c, NS, { deleteDocIds: ['B'] })
      expect(await store.count(c, NS)).toBe(0)
    })

    it('deleting a doc id that has no record is not an error', async () => {
      const c = await fresh('delete-unknown')
      await store.write(c, NS, { upsert: [chunk('k#0', vec(1, 0, 0, 0))] })
      await expect(store.write(c, NS, { deleteDocIds: ['never-stored'] })).resolves.toBeUndefined()
      expect(await store.count(c, NS)).toBe(1)
    })

    it('search returns at most limit hits, best first by cosine similarity', async () => {
      const c = await fresh('order')
      // cosines with q = (1,0,0,0) by hand: a 1, b 0.6, c 0, d -1, e 0.8
      await store.write(c, NS, {
        upsert: [
          chunk('a#0', vec(1, 0, 0, 0)),
          chunk('b#0', vec(0.6, 0.8, 0, 0)),
          chunk('c#0', vec(0, 0, 1, 0)),
          chunk('d#0', vec(-1, 0, 0, 0)),
          chunk('e#0', vec(0.8, 0, 0, 0.6))
        ]
      })
      const all = await store.search(c, NS, vec(1, 0, 0, 0), 10)
      expect(summary(all)).toEqual([
        ['a#0', 1],
        ['e#0', 0.8],
        ['b#0', 0.6],
        ['c#0', 0],
        ['d#0', -1]
      ])
      const top2 = await store.search(c, NS, vec(1, 0, 0, 0), 2)
      expect(summary(top2)).toEqual([
        ['a#0', 1],
        ['e#0', 0.8]
      ])
      expect(await store.search(c, NS, vec(1, 0, 0, 0), 0)).toEqual([])
      // a query off the axes: q = (0.6, 0.8, 0, 0); b 1, a 0.6, e 0.48, c 0, d -0.6
      const off = await store.search(c, NS, vec(0.6, 0.8, 0, 0), 3)
      expect(summary(off)).toEqual([
        ['b#0', 1],
        ['a#0', 0.6],
        ['e#0', 0.48]
      ])
    })

    it('search hits carry the stored payload', async () => {
      const c = await fresh('payload')
      const payload = { doc_id: 'guide-cough', text: '咳嗽三周以上', chunk_index: 3, title: '咳嗽', tags: ['a', 'b'], nested: { k: 1 } }
      await store.write(c, NS, { upsert: [{ id: 'guide-cough#3', vector: vec(0, 0, 1, 0), payload }] })
      const [hit] = await store.search(c, NS, vec(0, 0, 1, 0), 1)
      expect(hit).toBeDefined()
      expect(hit!.id).toBe('guide-cough#3')
      expect(hit!.payload).toEqual(payload)
    })

    it('search orders equal scores by id ascending, also across the limit', async () => {
      const c = await fresh('ties')
      // five records with the same vector, written in an order that is neither ascending nor descending
      const same = vec(0, 0.6, 0.8, 0)
      await store.write(c, NS, {
        upsert: ['t#3', 't#1', 't#4', 't#0', 't#2'].map((id) => chunk(id, same))
      })
      await store.write(c, NS, { upsert: [chunk('u#0', vec(0, 1, 0, 0))] })
      const hits = await store.search(c, NS, vec(0, 1, 0, 0), 4)
      expect(summary(hits)).toEqual([
        ['u#0', 1],
        ['t#0', 0.6],
        ['t#1', 0.6],
        ['t#2', 0.6]
      ])
    })

    it('rank gives the ids and scores search gives, in its order, without payloads', async () => {
      const c = await fresh('rank')
      // cosines with q = (1,0,0,0) by hand: a 1, e 0.8, t#0..t#2 0.6 each (ties by id), c 0; doc t kept by the filter
      await store.write(c, NS, {
        upsert: [
          chunk('a#0', vec(1, 0, 0, 0)), chunk('c#0', vec(0, 0, 1, 0)), chunk('e#0', vec(0.8, 0, 0, 0.6)),
          ...['t#2', 't#0', 't#1'].map((id) => chunk(id, vec(0.6, 0.8, 0, 0)))
        ]
      })
      const q = vec(1, 0, 0, 0)
      expect(summary(await store.rank(c, NS, q, 4) as VectorHit[])).toEqual([['a#0', 1], ['e#0', 0.8], ['t#0', 0.6], ['t#1', 0.6]])
      expect(summary(await store.rank(c, NS, q, 2, { doc_ids: ['t'] }) as VectorHit[])).toEqual([['t#0', 0.6], ['t#1', 0.6]])
      for (const [limit, filter] of [[10, undefined], [3, undefined], [2, { doc_ids: ['t', 'c'] }]] as const) {
        const ranked = await store.rank(c, NS, q, limit, filter)
        expect(ranked).toEqual((await store.search(c, NS, q, limit, filter)).map(({ id, score }) => ({ id, score })))
        for (const r of ranked) expect(Object.keys(r).sort()).toEqual(['id', 'score'])
      }
      expect(await store.rank(c, NS, q, 0)).toEqual([])
      expect(await store.rank(`contract_${run}_missing`, NS, q, 3)).toEqual([])
    })

    it('search on a missing collection gives [], not an error', async () => {
      expect(await store.search(`contract_${run}_missing`, NS, vec(1, 0, 0, 0), 10)).toEqual([])
    })

    it('scroll yields every id and payload, without vectors, in id order', async () => {
      const c = await fresh('scroll')
      const ids = ['m#2', 'a#10', 'a#9', 'z#0', 'b#1', 'a#1']
      await store.write(c, NS, { upsert: ids.map((id, i) => chunk(id, unit(1, i, 0, 0), { i })) })
      const rows = await collect(store, c)
      // id order is code-unit order of the strings: 'a#10' < 'a#9'
      expect(rows.map((r) => r.id)).toEqual(['a#1', 'a#10', 'a#9', 'b#1', 'm#2', 'z#0'])
      expect(rows.find((r) => r.id === 'a#9')).toEqual({ id: 'a#9', payload: { doc_id: 'a', text: 'text of a#9', i: 2 } })
      for (const row of rows) expect(Object.keys(row).sort()).toEqual(['id', 'payload'])
    })

    it('a payload written or read is not the stored one: changing it changes nothing stored', async () => {
      const c = await fresh('payload-copies')
      const written = chunk('a#0', unit(1, 0, 0, 0), { meta: { tags: ['x'], note: 'kept' } })
      await store.write(c, NS, { upsert: [written] })
      const stored = { doc_id: 'a', text: 'text of a#0', meta: { tags: ['x'], note: 'kept' } }
      ;(written.payload['meta'] as { tags: string[] }).tags.push('changed by the writer')
      written.payload.text = 'changed by the writer'
      const [read] = await collect(store, c)
      expect(read!.payload).toEqual(stored)
      ;(read!.payload['meta'] as { tags: string[]; note: string }).tags.push('changed by a reader')
      ;(read!.payload['meta'] as { note: string }).note = 'changed by a reader'
      const [hit] = await store.search(c, NS, unit(1, 0, 0, 0), 1)
      expect(hit!.payload).toEqual(stored)
      ;(hit!.payload['meta'] as { tags: string[] }).tags.length = 0
      expect((await collect(store, c))[0]!.payload).toEqual(stored)
    })

    it('scroll pages through a collection larger than one page', async () => {
      const c = await fresh('scroll-many')
      const ids = Array.from({ length: 600 }, (_, i) => `p#${String(i).padStart(4, '0')}`)
      await store.write(c, NS, { upsert: [...ids].reverse().map((id) => chunk(id, vec(0, 0, 0, 1))) })
      expect((await collect(store, c)).map((r) => r.id)).toEqual(ids)
      expect(await store.count(c, NS)).toBe(600)
    })

    it('scroll with doc ids yields only those documents\' records, in id order; [] yields none', async () => {
      const c = await fresh('scroll-docs')
      const ids = ['m#2', 'a#10', 'a#9', 'z#0', 'b#1', 'a#1', 'b#0']
      await store.write(c, NS, { upsert: ids.map((id, i) => chunk(id, unit(1, i, 0, 0), { i })) })
      const of = async (docIds: string[]) => {
        const out: string[] = []
        for await (const row of store.scroll(c, NS, docIds)) out.push(row.id)
        return out
      }
      expect(await of(['b', 'a', 'gone'])).toEqual(['a#1', 'a#10', 'a#9', 'b#0', 'b#1'])
      expect(await of(['z'])).toEqual(['z#0'])
      expect(await of([])).toEqual([])
      // more ids than one request takes
      expect(await of([...Array.from({ length: 700 }, (_, i) => `x${i}`), 'm'])).toEqual(['m#2'])
      expect(await of(['a'])).toEqual(['a#1', 'a#10', 'a#9'])
    })

    it('scroll on a missing collection yields nothing', async () => {
      expect(await collect(store, `contract_${run}_missing_scroll`)).toEqual([])
    })

    it('vectorsOf gives the stored vectors of the records it names, by id, as last written; others are left out', async () => {
      const c = await fresh('vectors-of')
      await store.write(c, NS, { upsert: [chunk('v#0', unit(3, 4, 0, 0)), chunk('v#1', vec(0, 1, 0, 0)), chunk('w#0', vec(0, 0, 1, 0))] })
      await store.write(c, NS, { upsert: [chunk('v#1', unit(0, 0, 1, 1))] })
      await store.write(c, 'other', { upsert: [chunk('x#0', vec(1, 0, 0, 0))] })
      const got = await store.vectorsOf(c, NS, ['v#1', 'v#0', 'gone#0', 'x#0'])
      expect([...got.keys()].sort()).toEqual(['v#0', 'v#1'])
      const rounded = (v: Float32Array | undefined) => Array.from(v ?? [], (x) => Number(x.toFixed(5)))
      expect(rounded(got.get('v#0'))).toEqual([0.6, 0.8, 0, 0])
      expect(rounded(got.get('v#1'))).toEqual([0, 0, 0.70711, 0.70711])
      expect(got.get('v#0')).toBeInstanceOf(Float32Array)
      // in its own namespace, the other record is there; after its document is deleted, it is not
      expect([...(await store.vectorsOf(c, 'other', ['x#0', 'v#0'])).keys()]).toEqual(['x#0'])
      await store.write(c, NS, { deleteDocIds: ['v'] })
      expect([...(await store.vectorsOf(c, NS, ['v#0', 'v#1', 'w#0'])).keys()]).toEqual(['w#0'])
      expect((await store.vectorsOf(c, NS, [])).size).toBe(0)
      expect((await store.vectorsOf(`contract_${run}_missing_vectors`, NS, ['v#0'])).size).toBe(0)
      // more ids than one request takes
      const many = Array.from({ length: 300 }, (_, i) => `m#${i}`)
      await store.write(c, NS, { upsert: many.map((id, i) => chunk(id, unit(1, i, 0, 0))) })
      const all = await store.vectorsOf(c, NS, many)
      expect(all.size).toBe(300)
      expect(rounded(all.get('m#299'))).toEqual(rounded(unit(1, 299, 0, 0)))
    })

    it('count is the number of records; a missing collection counts 0', async () => {
      const c = await fresh('count')
      await store.write(c, NS, { upsert: [chunk('c#0', vec(1, 0, 0, 0)), chunk('c#1', vec(0, 1, 0, 0)), chunk('d#0', vec(0, 0, 1, 0))] })
      await store.write(c, NS, { upsert: [chunk('c#1', vec(0, 0, 0, 1))] })
      expect(await store.count(c, NS)).toBe(3)
      expect(await store.count(`contract_${run}_missing_count`, NS)).toBe(0)
    })

    it('records written through the port are no legacy records: none counted, adopting changes nothing', async () => {
      const c = await fresh('legacy')
      await store.write(c, NS, { upsert: [chunk('e#0', vec(1, 0, 0, 0))] })
      await store.write(c, 'default', { upsert: [chunk('e#0', vec(0, 1, 0, 0))] })
      expect(await store.legacyRecords(c)).toBe(0)
      expect(await store.adoptLegacyRecords(c)).toBe(0)
      expect([await store.count(c, NS), await store.count(c, 'default')]).toEqual([1, 1])
      expect(await store.legacyRecords(`contract_${run}_missing_legacy`)).toBe(0)
    })

    it('collections are independent of each other', async () => {
      const c1 = await fresh('indep-1')
      const c2 = await fresh('indep-2', 2)
      await store.write(c1, NS, { upsert: [chunk('same#0', vec(1, 0, 0, 0))] })
      await store.write(c2, NS, { upsert: [{ id: 'same#0', vector: vec(0, 1), payload: { doc_id: 'other', text: 'two dims' } }] })
      await store.write(c1, NS, { deleteDocIds: ['same'] })
      expect(await store.count(c1, NS)).toBe(0)
      const [hit] = await store.search(c2, NS, vec(0, 1), 5)
      expect(hit?.payload).toEqual({ doc_id: 'other', text: 'two dims' })
    })

    it('dropCollection removes the collection and its data; dropping a missing one is not an error', async () => {
      const c = `contract_${run}_drop`
      created.push(c)
      await store.ensureCollection(c, 4)
      await store.write(c, NS, { upsert: [chunk('g#0', vec(1, 0, 0, 0))] })
      await store.dropCollection(c)
      expect(await store.count(c, NS)).toBe(0)
      expect(await store.search(c, NS, vec(1, 0, 0, 0), 5)).toEqual([])
      expect(await collect(store, c)).toEqual([])
      await expect(store.dropCollection(c)).resolves.toBeUndefined()
      // a dropped name can be created again, empty, even with another dimension
      await store.ensureCollection(c, 2)
      expect(await store.count(c, NS)).toBe(0)
    })

    it('the same id in two namespaces is two records: a write, search, scroll and count sees only its own', async () => {
      const c = await fresh('ns-same-ids')
      await store.write(c, 'tenant-a', { upsert: [chunk('d#0', vec(1, 0, 0, 0), { owner: 'a' }), chunk('d#1', vec(0, 1, 0, 0), { owner: 'a' })] })
      await store.write(c, 'tenant-b', { upsert: [chunk('d#0', vec(0, 0, 1, 0), { owner: 'b' })] })
      expect(await store.count(c, 'tenant-a')).toBe(2)
      expect(await store.count(c, 'tenant-b')).toBe(1)
      expect(await store.count(c, NS)).toBe(0)
      expect((await collect(store, c, 'tenant-b')).map((r) => [r.id, r.payload.owner])).toEqual([['d#0', 'b']])
      // tenant-a's d#0 is the best match of this query, yet tenant-b's search never sees it
      const inB = await store.search(c, 'tenant-b', vec(1, 0, 0, 0), 10)
      expect(summary(inB)).toEqual([['d#0', 0]])
      expect(inB[0]!.payload).toEqual({ doc_id: 'd', text: 'text of d#0', owner: 'b' })
      expect(summary(await store.search(c, 'tenant-a', vec(1, 0, 0, 0), 10))).toEqual([['d#0', 1], ['d#1', 0]])
    })

    it('a delete in one namespace leaves the same document in another untouched', async () => {
      const c = await fresh('ns-delete')
      await store.write(c, 'tenant-a', { upsert: [chunk('d#0', vec(1, 0, 0, 0)), chunk('e#0', vec(0, 1, 0, 0))] })
      await store.write(c, 'tenant-b', { upsert: [chunk('d#0', vec(1, 0, 0, 0))] })
      await store.write(c, 'tenant-a', { deleteDocIds: ['d'] })
      expect((await collect(store, c, 'tenant-a')).map((r) => r.id)).toEqual(['e#0'])
      expect((await collect(store, c, 'tenant-b')).map((r) => r.id)).toEqual(['d#0'])
      expect(summary(await store.search(c, 'tenant-b', vec(1, 0, 0, 0), 5))).toEqual([['d#0', 1]])
    })

    it('namespaces lists those holding records; dropNamespace removes one wholly and nothing else', async () => {
      const c = await fresh('ns-list')
      expect(await store.namespaces(c)).toEqual([])
      await store.write(c, 'tenant-b', { upsert: [chunk('x#0', vec(1, 0, 0, 0))] })
      await store.write(c, NS, { upsert: [chunk('x#0', vec(1, 0, 0, 0))] })
      await store.write(c, 'tenant-a', { upsert: [chunk('x#0', vec(1, 0, 0, 0)), chunk('y#0', vec(0, 1, 0, 0))] })
      expect(await store.namespaces(c)).toEqual(['default', 'tenant-a', 'tenant-b'])
      await store.dropNamespace(c, 'tenant-a')
      expect(await store.namespaces(c)).toEqual(['default', 'tenant-b'])
      expect(await store.count(c, 'tenant-a')).toBe(0)
      expect(await store.search(c, 'tenant-a', vec(1, 0, 0, 0), 5)).toEqual([])
      expect(await store.count(c, 'tenant-b')).toBe(1)
      expect(await store.count(c, NS)).toBe(1)
      // a namespace emptied by deletes is not listed either, and can be written again
      await store.write(c, 'tenant-b', { deleteDocIds: ['x'] })
      expect(await store.namespaces(c)).toEqual(['default'])
      await store.write(c, 'tenant-a', { upsert: [chunk('z#0', vec(0, 0, 1, 0))] })
      expect((await collect(store, c, 'tenant-a')).map((r) => r.id)).toEqual(['z#0'])
      await expect(store.dropNamespace(c, 'never-written')).resolves.toBeUndefined()
      await expect(store.dropNamespace(`contract_${run}_missing_ns`, 'tenant-a')).resolves.toBeUndefined()
      expect(await store.namespaces(`contract_${run}_missing_ns`)).toEqual([])
    })

    it('reads and deletes in a namespace that holds nothing give nothing and create nothing', async () => {
      const c = await fresh('ns-read-only')
      await store.write(c, 'tenant-a', { upsert: [chunk('a#0', vec(1, 0, 0, 0))] })
      expect(await store.search(c, 'ghost', vec(1, 0, 0, 0), 5)).toEqual([])
      expect(await store.count(c, 'ghost')).toBe(0)
      expect(await collect(store, c, 'ghost')).toEqual([])
      await store.write(c, 'ghost', { deleteDocIds: ['a'] })
      expect(await store.namespaces(c)).toEqual(['tenant-a'])
      expect(await store.count(c, 'tenant-a')).toBe(1)
    })

    it('dropCollection removes every namespace of the collection', async () => {
      const c = `contract_${run}_drop_ns`
      created.push(c)
      await store.ensureCollection(c, 4)
      await store.write(c, 'tenant-a', { upsert: [chunk('a#0', vec(1, 0, 0, 0))] })
      await store.write(c, NS, { upsert: [chunk('a#0', vec(1, 0, 0, 0))] })
      await store.dropCollection(c)
      expect(await store.namespaces(c)).toEqual([])
      await store.ensureCollection(c, 4)
      expect(await store.count(c, 'tenant-a')).toBe(0)
      expect(await store.count(c, NS)).toBe(0)
    })

    it('rejects a payload with a namespace key, which is reserved', async () => {
      const c = await fresh('ns-reserved')
      await expect(store.write(c, 'tenant-a', { upsert: [chunk('a#0', vec(1, 0, 0, 0), { namespace: 'tenant-b' })] })).rejects.toThrow(/namespace/)
      expect(await store.count(c, 'tenant-a')).toBe(0)
      expect(await store.count(c, 'tenant-b')).toBe(0)
    })

    it('rejects a malformed namespace', async () => {
      const c = await fresh('ns-malformed')
      await expect(store.write(c, 'Tenant A', { upsert: [chunk('a#0', vec(1, 0, 0, 0))] })).rejects.toThrow(/namespace/)
      await expect(store.search(c, '../x', vec(1, 0, 0, 0), 5)).rejects.toThrow(/namespace/)
    })

    /** Record i points at angle iπ/1000 in the first plane: its cosine with (1,0,0,0) is cos(iπ/1000), falling with i. */
    const fan = (count: number, extra: (i: number) => Record<string, unknown>): VectorRecord[] =>
      Array.from({ length: count }, (_, i) => chunk(`f${i}#0`, vec(Math.cos((i * Math.PI) / 1000), Math.sin((i * Math.PI) / 1000), 0, 0), { metadata: extra(i) }))
    const cosOf = (i: number) => Number(Math.cos((i * Math.PI) / 1000).toFixed(5))

    it('a filter keeping 1% of the records still gives limit hits, the best of those it keeps', async () => {
      const c = await fresh('filter-1pct')
      await store.write(c, 'tenant-a', { upsert: fan(400, (i) => ({ bucket: i % 100 })) })
      // a record that would pass, in another namespace, must not come back
      await store.write(c, 'tenant-b', { upsert: [chunk('f0#0', vec(1, 0, 0, 0), { metadata: { bucket: 7 } })] })
      const hits = await store.search(c, 'tenant-a', vec(1, 0, 0, 0), 3, { metadata: [{ key: 'bucket', equals: 7 }] })
      // bucket 7 holds records 7, 107, 207, 307: the best three are the first three
      expect(summary(hits)).toEqual([['f7#0', cosOf(7)], ['f107#0', cosOf(107)], ['f207#0', cosOf(207)]])
      expect(hits.map((h) => (h.payload.metadata as { bucket: number }).bucket)).toEqual([7, 7, 7])
      const all = await store.search(c, 'tenant-a', vec(1, 0, 0, 0), 10, { metadata: [{ key: 'bucket', equals: 7 }] })
      expect(all.map((h) => h.id)).toEqual(['f7#0', 'f107#0', 'f207#0', 'f307#0'])
    })

    it('filters by doc ids, equality, any-of, numeric range and list values, all conditions together', async () => {
      const c = await fresh('filter-kinds')
      const lang = ['zh', 'en', 'ja']
      await store.write(c, 'tenant-a', {
        upsert: fan(30, (i) => ({ lang: lang[i % 3]!, year: 2000 + i, score: i / 2, tags: i % 2 === 0 ? ['even', `t${i}`] : ['odd'], public: i % 5 === 0 }))
      })
      const ids = async (filter: Parameters<VectorStore['search']>[4]) =>
        (await store.search(c, 'tenant-a', vec(1, 0, 0, 0), 100, filter)).map((h) => Number(h.id.slice(1, -2)))
      expect(await ids({ doc_ids: ['f3', 'f1', 'f29', 'nope'] })).toEqual([1, 3, 29])
      expect(await ids({ doc_ids: [] })).toEqual([])
      expect(await ids({ metadata: [{ key: 'lang', equals: 'ja' }] })).toEqual([2, 5, 8, 11, 14, 17, 20, 23, 26, 29])
      expect(await ids({ metadata: [{ key: 'public', equals: true }] })).toEqual([0, 5, 10, 15, 20, 25])
      expect(await ids({ metadata: [{ key: 'year', equals: 2007 }] })).toEqual([7])
      expect(await ids({ metadata: [{ key: 'score', equals: 3.5 }] })).toEqual([7])
      expect(await ids({ metadata: [{ key: 'lang', any_of: ['en', 'ja'] }, { key: 'year', range: { gte: 2020, lt: 2025 } }] })).toEqual([20, 22, 23])
      expect(await ids({ metadata: [{ key: 'year', any_of: [2001, 2003] }] })).toEqual([1, 3])
      expect(await ids({ metadata: [{ key: 'score', range: { gt: 13 } }] })).toEqual([27, 28, 29])
      // a list value matches when it holds the value
      expect(await ids({ metadata: [{ key: 'tags', equals: 't4' }] })).toEqual([4])
      expect(await ids({ metadata: [{ key: 'tags', any_of: ['t2', 'odd'] }, { key: 'year', range: { lte: 2005 } }] })).toEqual([1, 2, 3, 5])
      // a missing key, or a range over strings, keeps nothing
      expect(await ids({ metadata: [{ key: 'missing', equals: 'x' }] })).toEqual([])
      expect(await ids({ metadata: [{ key: 'lang', range: { gte: 0 } }] })).toEqual([])
      expect(await ids({ doc_ids: ['f0', 'f5', 'f6'], metadata: [{ key: 'public', equals: true }] })).toEqual([0, 5])
    })

    it('stamp, where the backend gives one, moves with every change of the namespace\'s records and only then', async () => {
      if (!store.stamp) return // optional: a backend that cannot tell (Qdrant) has none, and readers keep no copy
      const c = await fresh('stamp')
      const stampOf = (namespace = NS) => store.stamp!(c, namespace)
      await store.write(c, NS, { upsert: [chunk('a#0', vec(1, 0, 0, 0)), chunk('b#0', vec(0, 1, 0, 0))] })
      const first = await stampOf()
      expect(first).toBeDefined()
      // reads change nothing
      await collect(store, c)
      await store.search(c, NS, vec(1, 0, 0, 0), 1)
      expect(await stampOf()).toBe(first)
      // another namespace's write is not this namespace's change
      await store.write(c, 'stamp-other', { upsert: [chunk('z#0', vec(0, 0, 1, 0))] })
      expect(await stampOf()).toBe(first)
      const seen = new Set([first])
      const moved = async () => {
        const now = await stampOf()
        expect(seen.has(now), `stamp ${now} repeats an earlier state's`).toBe(false)
        seen.add(now)
      }
      // the same record written again is a write too; a delete; a drop; the same records written again after the drop
      await store.write(c, NS, { upsert: [chunk('a#0', vec(1, 0, 0, 0))] })
      await moved()
      await store.write(c, NS, { deleteDocIds: ['b'] })
      await moved()
      await store.dropNamespace(c, NS)
      await store.write(c, NS, { upsert: [chunk('a#0', vec(1, 0, 0, 0)), chunk('b#0', vec(0, 1, 0, 0))] })
      await moved()
      await store.write(c, NS, { deleteDocIds: ['b'] })
      await moved()
      await store.dropNamespace(c, 'stamp-other')
    })

    it('health reports the backend as reachable', async () => {
      const health = await store.health()
      expect(health.ok).toBe(true)
      expect(health.backend).toBe(`vector-store:${store.backend}`)
      expect(health.latency_ms).toBeGreaterThanOrEqual(0)
    })
  })
}
