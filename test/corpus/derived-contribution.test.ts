/**
 * A document's stored version is derived once: the graph's part and the Episodes' part of one write share the result,
 * found by document id for chunks that give the derivation the same input, and another version derives again. The expected entities are read off the text.
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
    // the Episodes' part reads the same records from the catalog: the first result, not a second derivation
    expect(derivedContribution([...records], options)).toBe(first)
    // the catalog builds a document's records anew on each read: records with the same input share the result
    expect(derivedContribution(records.map((r) => ({ ...r })), options)).toBe(first)
    // other metadata (another object) derives again, to what it now says
    const again = derivedContribution(records.map((r) => ({ ...r, metadata: {} })), options)
    expect(again).not.toBe(first)
    expect(again).toEqual(first)
    // a changed second chunk derives what it now says
    const changed = derivedContribution([records[0]!, chunk('doc#1', 1, '鉴权中间件依赖平台组。')], options)
    expect(changed).not.toBe(first)
    expect(changed.relations.map((r) => `${r.source}-${r.type}-${r.target}`)).toContain('鉴权中间件-依赖-平台组')
  })

  it('does not share a result across other options', () => {
    const records = [chunk('doc#0', 0, '鉴权中间件由平台组负责维护。')]
    const first = derivedContribution(records, options)
    expect(derivedContribution(records, derivationOptions({ userDictionary: ['鉴权中间件', '平台组'] }))).not.toBe(first)
  })
})
