/**
 * Token ids on Qdrant (docs/scale-out.md): murmur3_32 against published test vectors, and a real colliding pair
 * of tokens that must not change a single score, whether the two tokens sit in different chunks or in one.
 */
import { QdrantClient } from '@qdrant/js-client-rest'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { lexicalPoint } from '../../src/providers/lexical-index/lexical-point.js'
import { QdrantLexicalIndexes } from '../../src/providers/lexical-index/qdrant.js'
import { murmur3x86_32, tokenId } from '../../src/providers/lexical-index/token-id.js'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'

const url = inject('qdrantUrl')
if (!url) console.warn(`lexical-index.qdrant-collisions: ${QDRANT_SKIP_LINE}`)

const bytes = (s: string) => new TextEncoder().encode(s)

describe('murmur3_32 token ids', () => {
  it('matches the published MurmurHash3 x86_32 test vectors', () => {
    expect(murmur3x86_32(bytes(''), 0)).toBe(0)
    expect(murmur3x86_32(bytes(''), 1)).toBe(0x514e28b7)
    expect(murmur3x86_32(bytes('test'), 0)).toBe(0xba6bd213)
    expect(murmur3x86_32(bytes('hello'), 0)).toBe(0x248bfa47)
    expect(murmur3x86_32(bytes('The quick brown fox jumps over the lazy dog'), 0)).toBe(0x2e4ff723)
  })

  it('a chunk holding two tokens with one id stores their summed count once, and each count apart', () => {
    expect(tokenId('w30181')).toBe(tokenId('w38066'))
    const point = lexicalPoint('w30181 w38066 w38066 other', 4)
    const id = tokenId('w30181')
    expect(point.sparse.indices.filter((i) => i === id)).toHaveLength(1)
    expect(point.sparse.values[point.sparse.indices.indexOf(id)]).toBe(3)
    expect(point.payload.lex_split).toEqual({ w30181: 1, w38066: 2 })
    expect(point.payload.lex_len).toBe(4)
    expect(lexicalPoint('plain words', 2).payload.lex_split).toBeUndefined()
  })
})

describe.skipIf(!url)('colliding tokens on a real Qdrant', () => {
  const collection = `lex_collisions_${process.pid}`
  afterAll(async () => {
    await new QdrantClient({ url, checkCompatibility: false }).deleteCollection(collection).catch(() => undefined)
  })

  it('score as if the ids were distinct: a query for one token never counts the other', async () => {
    const indexes = new QdrantLexicalIndexes({ url, timeoutMs: 10_000, collection, points: 'own' })
    const index = indexes.get('default')
    // BM25 by hand, N = 4, avgdl = (2 + 3 + 2 + 1) / 4 = 2, k1 1.2, b 0.75.
    // w30181: df 2 (a, c), idf = ln((4 - 2 + 0.5)/(2 + 0.5) + 1) = ln 2 = 0.693147; a and c: tf 1, len 2:
    //   2.2 / (1.2 * 1 + 1) * ln 2 = 0.6931 (were the two tokens one, df would be 3 and c's tf 2)
    // w38066: df 2 (b, c); b: tf 1, len 3: 2.2 / (1.2 * (0.25 + 0.75 * 1.5) + 1) * ln 2 = 2.2 / 2.65 * 0.693147 = 0.5754;
    //   c: tf 1, len 2: 0.6931
    await index.write({ upsert: [
      { id: 'a', text: 'w30181 alpha' },
      { id: 'b', text: 'w38066 beta gamma' },
      { id: 'c', text: 'w30181 w38066' },
      { id: 'd', text: 'delta' }
    ] })
    expect(await index.search('w30181', 10)).toEqual([{ id: 'a', score: 0.6931 }, { id: 'c', score: 0.6931 }])
    expect(await index.search('w38066', 10)).toEqual([{ id: 'c', score: 0.6931 }, { id: 'b', score: 0.5754 }])
  })
})
