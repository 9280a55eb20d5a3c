/**
 * A document's stored version is derived once: the graph's part and the Episodes' part of one write share the result
 * (the catalog gives each a record of its own, with the same fields), and a changed document derives again; only the
 * last documents' results are kept. The expected entities are read off the text.
 */
import { describe, expect, it } from 'vitest'
import { derivedContribution } from '../../src/corpus/derived-contribution.js'
import { derivationOptions } from '../../src/derive/options.js'
import type { ChunkRecord } from '../../src/kernel/chunk-payload.js'

const chunk = (id: string, index: number, text: string): ChunkRecord =>
  ({ id, doc_id: 'doc', chunk_index: index, text, source: 'doc' }) as ChunkRecord

describe('derivedContribution', () => {
  const options = derivationOptions({ userDictionary: ['鉴权中间件', '平台组'] })

  it('answers the same result for the same stored chunk records, and derives a replaced record again', () => {
    const records = [chunk('doc#0', 0, '鉴权中间件由平台组负责维护。'), chunk('doc#1', 1, '平台组在周会上复盘。')]
    const first = derivedContribution(records, options)
    expect(first.entities.map((e) => e.key)).toEqual(expect.arrayContaining(['鉴权中间件', '平台组']))
    // the Episodes' part reads the same chunks from the catalog, as records of its own: the first result, not a second derivation
    expect(derivedContribution(records.map((r) => ({ ...r })), options)).toBe(first)
    // another title is another version: derived again, to an equal result (the text names the entities)
    const retitled = derivedContribution(records.map((r) => ({ ...r, title: '值班' })), options)
    expect(retitled).not.toBe(first)
    expect(retitled.entities.map((e) => e.key)).toEqual(expect.arrayContaining(['鉴权中间件', '平台组']))
    // a changed second chunk derives what it now says
    const changed = derivedContribution([records[0]!, chunk('doc#1', 1, '鉴权中间件依赖平台组。')], options)
    expect(changed).not.toBe(first)
    expect(changed.relations.map((r) => `${r.source}-${r.type}-${r.target}`)).toContain('鉴权中间件-依赖-平台组')
  })

  it('keeps only the last documents\' results: one derived before a few thousand chunks of others derives again', () => {
    const records = [chunk('doc#0', 0, '鉴权中间件由平台组负责维护。')]
    const first = derivedContribution(records, options)
    expect(derivedContribution(records.map((r) => ({ ...r })), options)).toBe(first)
    for (let d = 0; d < 300; d++) {
      const others = Array.from({ length: 8 }, (_, i) => ({ ...chunk(`other-${d}#${i}`, i, '平台组复盘。'), doc_id: `other-${d}` }))
      derivedContribution(others, options)
    }
    const later = derivedContribution(records.map((r) => ({ ...r })), options)
    expect(later).not.toBe(first)
    expect(later).toEqual(first)
  })

  it('does not share a result across other options', () => {
    const records = [chunk('doc#0', 0, '鉴权中间件由平台组负责维护。')]
    const first = derivedContribution(records, options)
    expect(derivedContribution(records, derivationOptions({ userDictionary: ['鉴权中间件', '平台组'] }))).not.toBe(first)
  })
})
