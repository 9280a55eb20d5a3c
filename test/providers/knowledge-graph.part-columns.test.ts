import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { CompactEntity } from '../../src/providers/knowledge-graph/compact-graph.js'
import { EmbeddedKnowledgeGraphStore, restoreEntity } from '../../src/providers/knowledge-graph/embedded.js'
import { seededRandom } from '../../src/evaluation/statistics.js'
import { ByIdHash, DerivedRelation } from '../../src/providers/knowledge-graph/derived-items.js'
import { capacityOf, PartColumns, StringNumbers } from '../../src/providers/knowledge-graph/part-columns.js'
import type { KgContribution, KgDerivation } from '../../src/providers/knowledge-graph/port.js'

// The embedded graph keeps a derived item's parts as integer cells (issue 44); a part the cells cannot hold (a second
// name, a description, chunk ids that are no bit mask, a count that is not a 32-bit integer) is kept beside them. Each
// case writes parts of every such form and reads back what the port promises: each document's part as written.

const NS = 'cells'

/** A document's contribution: entity `网关` named `name`, and a relation 网关 → 鉴权 stated `count` times. */
function contribution(doc: string, part: { name: string; chunks: string[]; count: number; description?: string; type?: string; llm?: true }): KgContribution {
  return {
    entities: [
      { key: '网关', name: part.name, chunk_ids: part.chunks, mentions: part.count, ...(part.type ? { type: part.type } : {}), ...(part.description ? { description: part.description } : {}), ...(part.llm ? { llm: true as const } : {}) },
      { key: '鉴权', name: '鉴权', chunk_ids: part.chunks, mentions: 1 }
    ],
    relations: [{ source: '网关', target: '鉴权', type: '依赖', chunk_ids: part.chunks, count: part.count, ...(part.llm ? { llm: true as const } : {}) }]
  }
}

/** What the spec says the entity's part of `doc` is: the contribution's fields, keys as a derived write makes them. */
function entityPart(doc: string, part: Parameters<typeof contribution>[1]): KgDerivation {
  return {
    doc_id: doc, chunk_ids: part.chunks, count: part.count, name: part.name,
    ...(part.type ? { type: part.type } : {}), ...(part.description ? { description: part.description } : {}), ...(part.llm ? { llm: true as const } : {})
  }
}

const PARTS: Record<string, Parameters<typeof contribution>[1]> = {
  // the first document names the entity, so its name is the one a part's flag stands for
  'a': { name: '网关', chunks: ['a#0', 'a#2'], count: 2, type: '组件' },
  // another spelling of the name, and a description
  'b': { name: 'API 网关', chunks: ['b#1'], count: 1, description: '网关是所有请求的入口。' },
  // chunk indices past the mask's 30 bits, and out of order
  'c': { name: '网关', chunks: ['c#31', 'c#4'], count: 3, llm: true },
  // chunk ids of another form than <doc>#<index>
  'd': { name: '网关', chunks: ['d-part-1', 'd#01'], count: 1 },
  // a count past a 32-bit integer, and one that is not whole
  'e': { name: '网关', chunks: ['e#0'], count: 2 ** 40 },
  'f': { name: '网关', chunks: ['f#29'], count: 1.5, type: '服务' }
}

describe('the derived graph\'s parts in integer cells', () => {
  it('gives back every part as written, after removals move parts within an item, and after a reopen from disk', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kg-part-columns-'))
    try {
      let store = new EmbeddedKnowledgeGraphStore({ dir })
      await store.replaceDerived(NS, new Map(Object.entries(PARTS).map(([doc, part]) => [doc, contribution(doc, part)])))
      // taking out `b` and `c` moves the last parts into their places
      await store.replaceDerived(NS, new Map([['b', { entities: [], relations: [] }], ['c', { entities: [], relations: [] }]]))
      const kept = ['a', 'd', 'e', 'f']
      const expected = kept.map((doc) => entityPart(doc, PARTS[doc]!))
      const check = async () => {
        const [entity] = await store.getEntities(NS, ['d:网关'])
        expect(entity!.derived_from).toEqual(expected)
        expect(entity!.name).toBe('网关')
        expect(entity!.type).toBe('组件')
        expect(entity!.description).toBeUndefined()
        const { relations } = await store.derivedOf(NS, kept)
        expect(relations).toHaveLength(1)
        expect(relations[0]!.derived_from).toEqual(kept.map((doc) => ({ doc_id: doc, chunk_ids: PARTS[doc]!.chunks, count: PARTS[doc]!.count })))
        expect(relations[0]!.weight).toBe(2 + 1 + 2 ** 40 + 1.5)
      }
      await check()
      // `b` again: its second name and description come back, and the description is now the entity's
      await store.replaceDerived(NS, new Map([['b', contribution('b', PARTS['b']!)]]))
      expected.splice(1, 0, entityPart('b', PARTS['b']!))
      kept.splice(1, 0, 'b')
      const [withB] = await store.getEntities(NS, ['d:网关'])
      expect(withB!.derived_from).toEqual(expected)
      expect(withB!.description).toBe('网关是所有请求的入口。')
      await store.replaceDerived(NS, new Map([['b', { entities: [], relations: [] }]]))
      expected.splice(1, 1)
      kept.splice(1, 1)
      await store.close()
      store = new EmbeddedKnowledgeGraphStore({ dir })
      await check()
      // the load packed the cells to their exact length: writes after it grow them again
      await store.replaceDerived(NS, new Map([['b', contribution('b', PARTS['b']!)], ['g', contribution('g', { name: '网关', chunks: ['g#3'], count: 4 })]]))
      const [grown] = await store.getEntities(NS, ['d:网关'])
      expect(grown!.derived_from).toEqual([...expected.slice(0, 1), entityPart('b', PARTS['b']!), ...expected.slice(1), entityPart('g', { name: '网关', chunks: ['g#3'], count: 4 })])
      await store.close()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('keeps a hub entity\'s parts right as it grows past sixteen parts and shrinks back', async () => {
    const store = new EmbeddedKnowledgeGraphStore()
    const docs = Array.from({ length: 40 }, (_, i) => `doc-${String(i).padStart(2, '0')}`)
    await store.replaceDerived(NS, new Map(docs.map((doc, i) => [doc, contribution(doc, { name: '网关', chunks: [`${doc}#${i % 7}`], count: i + 1 })])))
    // every other document goes, then the first ten are written again with another count
    await store.replaceDerived(NS, new Map(docs.filter((_, i) => i % 2 === 1).map((doc) => [doc, { entities: [], relations: [] }])))
    await store.replaceDerived(NS, new Map(docs.slice(0, 10).map((doc, i) => [doc, contribution(doc, { name: '网关', chunks: [`${doc}#${i % 7}`], count: 100 + i })])))
    const expected = docs.map((doc, i) => ({ doc, i })).filter(({ i }) => i < 10 || i % 2 === 0)
      .map(({ doc, i }) => ({ doc_id: doc, chunk_ids: [`${doc}#${i % 7}`], count: i < 10 ? 100 + i : i + 1, name: '网关' }))
    const [entity] = await store.getEntities(NS, ['d:网关'])
    expect(entity!.derived_from).toEqual(expected)
    expect((await store.derivedOf(NS, ['doc-11', 'doc-13'])).entities).toEqual([])
    // all gone: the entity and its relation with them
    await store.replaceDerived(NS, new Map(docs.map((doc) => [doc, { entities: [], relations: [] }])))
    expect(await store.count(NS)).toEqual({ entities: 0, relations: 0 })
    await store.close()
  })

  it('names a derived entity by its first document\'s part after every write, read before and after each', async () => {
    const store = new EmbeddedKnowledgeGraphStore()
    const name = async () => (await store.namesOf(NS, ['d:网关']))[0]?.name
    const part = (doc: string, name: string) => contribution(doc, { name, chunks: [`${doc}#0`], count: 1 })
    await store.replaceDerived(NS, new Map([['m', part('m', 'API 网关')]]))
    expect(await name()).toBe('API 网关')
    // a document before it in id order gives the name now; then it goes, and the name is the first one's again
    await store.replaceDerived(NS, new Map([['c', part('c', '网关')]]))
    expect(await name()).toBe('网关')
    await store.replaceDerived(NS, new Map([['c', { entities: [], relations: [] }]]))
    expect(await name()).toBe('API 网关')
    // a hub, whose parts are found by a search rather than a scan
    const docs = Array.from({ length: 30 }, (_, i) => `n-${String(i).padStart(2, '0')}`)
    await store.replaceDerived(NS, new Map(docs.map((doc) => [doc, part(doc, '网关服务')])))
    expect(await name()).toBe('API 网关')
    await store.replaceDerived(NS, new Map([['a', part('a', 'Gateway')]]))
    expect(await name()).toBe('Gateway')
    await store.replaceDerived(NS, new Map([['a', { entities: [], relations: [] }], ['m', { entities: [], relations: [] }]]))
    expect(await name()).toBe('网关服务')
    await store.close()
  })

  it('finds each document\'s part of a hub written, rewritten and removed in no order, with odd parts among them', async () => {
    const store = new EmbeddedKnowledgeGraphStore()
    const random = seededRandom(44)
    const docs = Array.from({ length: 300 }, (_, i) => `doc-${i}`)
    // the model: each document's part as last written (the spec: a derived write replaces the written documents' parts)
    const model = new Map<string, Parameters<typeof contribution>[1]>()
    const partOf = (doc: string, round: number): Parameters<typeof contribution>[1] => {
      const odd = random() < 0.2
      return odd ? { name: `网关 ${round}`, chunks: [`${doc}#40`], count: round + 0.5, description: `第 ${round} 轮` } : { name: '网关', chunks: [`${doc}#${round % 5}`], count: round + 1 }
    }
    for (let round = 0; round < 6; round++) {
      const shuffled = [...docs].sort(() => random() - 0.5).slice(0, 120)
      const batch = new Map<string, KgContribution>()
      for (const doc of shuffled) {
        if (random() < 0.3) {
          batch.set(doc, { entities: [], relations: [] })
          model.delete(doc)
        } else {
          const part = partOf(doc, round)
          batch.set(doc, contribution(doc, part))
          model.set(doc, part)
        }
      }
      await store.replaceDerived(NS, batch)
      const [entity] = await store.getEntities(NS, ['d:网关'])
      const expected = [...model.keys()].sort().map((doc) => entityPart(doc, model.get(doc)!))
      expect(entity?.derived_from ?? []).toEqual(expected)
      const { relations } = await store.derivedOf(NS, docs)
      expect(relations.map((r) => r.weight)).toEqual(model.size === 0 ? [] : [[...model.values()].reduce((sum, part) => sum + part.count, 0)])
    }
    await store.close()
  })

  it('takes a snapshot row whose parts an older build wrote in no document order, odd fields with their parts', () => {
    const strings = { docs: ['b', 'a', 'c'], types: ['组件'] }
    // document, count, chunks (a bit mask), llm, name (0: the item's), type, description
    const row: CompactEntity = ['d:网关', '网关', '网关', [
      0, 2, 0b101, null, 0, 0, null,
      1, 3, 0, 1, 'API 网关', null, '入口',
      2, 1, 0b10, null, null, null, null
    ]]
    const entity = restoreEntity(row, strings)
    expect(entity.docs()).toEqual(['a', 'b', 'c'])
    expect(entity.derivation('a')).toEqual({ doc_id: 'a', chunk_ids: [], count: 3, name: 'API 网关', description: '入口', llm: true })
    expect(entity.derivation('b')).toEqual({ doc_id: 'b', chunk_ids: ['b#0', 'b#2'], count: 2, name: '网关', type: '组件' })
    expect(entity.derivation('c')).toEqual({ doc_id: 'c', chunk_ids: ['c#1'], count: 1 })
    expect(entity.description).toBe('入口')
  })
})

describe('derived relations by id, without their id strings', () => {
  it('finds a relation by the id built from its ends and type, one stored under another id by that id alone', () => {
    const table = new ByIdHash<DerivedRelation>()
    const plain = new DerivedRelation('d:网关-[依赖]->d:鉴权', 'd:网关', 'd:鉴权', '依赖')
    const other = new DerivedRelation('legacy-7', 'd:网关', 'd:日志', '依赖')
    table.set(plain)
    table.set(other)
    expect(plain.id).toBe('d:网关-[依赖]->d:鉴权')
    expect(other.id).toBe('legacy-7')
    expect(table.get('d:网关-[依赖]->d:鉴权')).toBe(plain)
    expect(table.get('legacy-7')).toBe(other)
    // near misses: the other relation's built id, a longer end, another type, another separator
    for (const id of ['d:网关-[依赖]->d:日志', 'd:网关-[依赖]->d:鉴权x', 'd:网关-[调用]->d:鉴权', 'd:网关-[依赖]=>d:鉴权', 'd:网关+[依赖]->d:鉴权']) {
      expect(table.get(id)).toBeUndefined()
    }
    expect(table.size).toBe(2)
    table.set(new DerivedRelation('legacy-7', 'd:网关', 'd:日志', '依赖'))
    expect(table.size).toBe(2)
    table.delete('legacy-7')
    expect([table.size, table.get('legacy-7')]).toEqual([1, undefined])
  })
})

describe('the cells\' runs and numbers', () => {
  it('sizes a run by classes 1, 2, 3, 4, then steps of 1.5x', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17, 24, 25, 100].map(capacityOf)).toEqual([1, 2, 3, 4, 6, 6, 8, 8, 12, 12, 16, 16, 24, 24, 32, 128])
  })

  it('hands a freed run to the next item of its size and keeps cells when the columns grow', () => {
    const columns = new PartColumns(3, 2)
    const a = columns.allocate(2)
    columns.cells.set([1, 2, 3, 4, 5, 6], a * 3)
    const b = columns.allocate(3)
    expect(b).toBe(2)
    expect([...columns.cells.subarray(0, 6)]).toEqual([1, 2, 3, 4, 5, 6])
    columns.release(a, 2)
    expect(columns.allocate(3)).toBe(5)
    expect(columns.allocate(2)).toBe(a)
  })

  it('packs the runs it is given into cells of their exact length, in that order, their cells kept', () => {
    const columns = new PartColumns(2, 8)
    const runs = [3, 1, 2].map((capacity) => ({ capacity, start: columns.allocate(capacity) }))
    columns.release(columns.allocate(4), 4)
    runs.forEach((run, i) => columns.cells.fill(i + 1, run.start * 2, (run.start + run.capacity) * 2))
    const items = [runs[2]!, runs[0]!].map((run) => ({
      capacity: run.capacity,
      moveRun(cells: Int32Array, at: number) {
        cells.set(columns.cells.subarray(run.start * 2, (run.start + run.capacity) * 2), at * 2)
        run.start = at
        return at + run.capacity
      }
    }))
    columns.repack(items)
    expect([...columns.cells]).toEqual([3, 3, 3, 3, 1, 1, 1, 1, 1, 1])
    expect([runs[2]!.start, runs[0]!.start]).toEqual([0, 2])
    // the freed run of 4 is forgotten: the next run starts past the packed ones
    expect(columns.allocate(4)).toBe(5)
  })

  it('counts the room outside runs: freed runs, and what growing by half leaves past the last run', () => {
    const columns = new PartColumns(2, 1)
    columns.allocate(1)
    columns.cells.set([7, 8], 0)
    // 4 parts needed, more than half again of 1: grown to exactly 4, the first run kept
    const a = columns.allocate(3)
    expect(a).toBe(1)
    expect(columns.cells.length).toBe(4 * 2)
    expect([...columns.cells.subarray(0, 2)]).toEqual([7, 8])
    expect(columns.slack).toBe(0)
    // 5 parts needed: grown by half, 4 -> 6, one part past the last run
    const b = columns.allocate(1)
    expect(b).toBe(4)
    expect(columns.cells.length).toBe(6 * 2)
    expect(columns.slack).toBe(1)
    columns.release(a, 3)
    expect(columns.slack).toBe(4)
    expect(columns.allocate(3)).toBe(a)
    expect(columns.slack).toBe(1)
  })

  it('numbers a string once while held, and frees its number when the last holder lets go', () => {
    const numbers = new StringNumbers()
    const a = numbers.hold('doc-a')
    expect(numbers.hold('doc-a')).toBe(a)
    const b = numbers.hold('doc-b')
    numbers.release(a)
    expect(numbers.string(a)).toBe('doc-a')
    numbers.release(a)
    expect(numbers.numberOf('doc-a')).toBeUndefined()
    expect(() => numbers.string(a)).toThrow(RangeError)
    expect(numbers.hold('doc-c')).toBe(a)
    expect(numbers.string(b)).toBe('doc-b')
  })
})
