import { describe, expect, it } from 'vitest'
import { detachPayload, type VectorPayload } from '../../src/providers/vector-store/payload.js'
import { seededRandom } from '../../src/evaluation/statistics.js'

/** The definition: what a JSON round trip gives (or throws). */
const roundTrip = (payload: unknown): unknown => JSON.parse(JSON.stringify(payload))

function sameAsRoundTrip(payload: unknown): void {
  const copy = detachPayload(payload as VectorPayload)
  expect(copy).toStrictEqual(roundTrip(payload))
  // the same keys in the same order, all the way down
  expect(JSON.stringify(copy)).toBe(JSON.stringify(payload))
}

describe('a payload detached from its writer', () => {
  it('is what a JSON round trip gives, for payloads as recall writes them', () => {
    sameAsRoundTrip({
      doc_id: 'guide', text: '网关负责鉴权。'.repeat(40), chunk_index: 3, source: 'guide.md', title: '指南', heading_path: ['一', '二'],
      versions: { chunker: 'c1', analyzer: 'a1', model: 'm' }, fingerprint: 'f00d', metadata: { tags: ['a', 'b'], year: 2024, draft: false, note: null }
    })
  })

  it('is what a JSON round trip gives for values JSON changes or drops', () => {
    const withProtoKey = JSON.parse('{"doc_id":"d","text":"t","__proto__":{"x":1}}') as unknown
    const cases: unknown[] = [
      { doc_id: 'd', text: 't', zero: -0, list: [-0, 1.5, 1e21, 5e-324] },
      { doc_id: 'd', text: 't', missing: undefined, list: [undefined, 1] },
      { doc_id: 'd', text: 't', n: Number.NaN, i: [Infinity, -Infinity] },
      { doc_id: 'd', text: 't', when: new Date(0), f: () => 1, s: Symbol('s') },
      { doc_id: 'd', text: 't', own: { toJSON: () => 'replaced' } },
      { doc_id: 'd', text: 't', map: new Map([['a', 1]]), boxed: new String('b') },
      // eslint-disable-next-line no-sparse-arrays
      { doc_id: 'd', text: 't', sparse: [1, , 3] },
      Object.assign(Object.create(null) as object, { doc_id: 'd', text: 't', inner: Object.assign(Object.create(null) as object, { a: 1 }) }),
      { doc_id: 'd', text: 't', 2: 'two', b: 'b', 1: 'one' },
      withProtoKey,
      { doc_id: 'd', text: 't', deep: Array.from({ length: 40 }).reduce<unknown>((inner) => ({ inner }), 'bottom') },
      { doc_id: 'd', text: 't', tail: Object.assign([1, 2], { extra: 'dropped' }) }
    ]
    for (const payload of cases) sameAsRoundTrip(payload)
    expect(Object.getPrototypeOf(detachPayload(withProtoKey as VectorPayload))).toBe(Object.prototype)
    expect(Object.keys(detachPayload(withProtoKey as VectorPayload))).toEqual(['doc_id', 'text', '__proto__'])
  })

  it('throws as the round trip does for what cannot be written', () => {
    const circular: Record<string, unknown> = { doc_id: 'd', text: 't' }
    circular['self'] = circular
    expect(() => detachPayload(circular as VectorPayload)).toThrow(TypeError)
    expect(() => detachPayload({ doc_id: 'd', text: 't', big: 1n } as unknown as VectorPayload)).toThrow(TypeError)
  })

  it('is a copy: changing the writer\'s payload afterwards changes nothing kept', () => {
    const payload = { doc_id: 'd', text: 't', metadata: { tags: ['a'] } }
    const copy = detachPayload(payload)
    payload.metadata.tags.push('b')
    payload.text = 'changed'
    expect(copy).toStrictEqual({ doc_id: 'd', text: 't', metadata: { tags: ['a'] } })
  })

  it('is what a JSON round trip gives for random nested payloads', () => {
    const random = seededRandom(44)
    const value = (depth: number): unknown => {
      const r = random()
      if (depth > 3 || r < 0.3) return ['x', '', '网关', 0, -1.25, 7, true, false, null][Math.floor(random() * 9)]
      if (r < 0.6) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1))
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, (_, i) => [random() < 0.2 ? String(i) : `k${i}`, value(depth + 1)]))
    }
    for (let n = 0; n < 300; n++) sameAsRoundTrip({ doc_id: `d${n}`, text: 't', value: value(0) })
  })
})
