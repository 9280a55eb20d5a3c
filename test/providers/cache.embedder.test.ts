import { randomUUID } from 'node:crypto'
import { resolve } from 'node:path'
import { describe, expect, inject, it } from 'vitest'
import { CachedEmbedder, decodeVector, encodeVector } from '../../src/providers/cache/cached-embedder.js'
import { embeddingCacheKey } from '../../src/providers/cache/keys.js'
import { MemoryCache } from '../../src/providers/cache/memory.js'
import { RedisCache } from '../../src/providers/cache/redis.js'
import { LocalEmbedder } from '../../src/providers/embedder/local.js'
import { BackendUnavailableError } from '../../src/providers/errors.js'
import { describeEmbedderContract } from '../contracts/embedder.contract.js'

// The real model (`npm run model`), as in embedder.local.test.ts.
const MODEL_DIR = resolve(process.env['MODEL_DIR'] ?? 'models')
const MODEL_NAME = 'bge-small-zh-v1.5'
const makeModel = (): LocalEmbedder => new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME })

const sameBits = (a: Float32Array | undefined, b: Float32Array | undefined): boolean =>
  a !== undefined && b !== undefined && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength))

describe('vector codec', () => {
  it('encodes float32 little-endian: [1, -2] is 0000803f 000000c0', () => {
    // IEEE 754 single: 1.0 = 0x3f800000, -2.0 = 0xc0000000; little-endian bytes 00 00 80 3f 00 00 00 c0.
    expect(encodeVector(Float32Array.from([1, -2])).toString('hex')).toBe('0000803f000000c0')
  })

  it('round-trips every float32 exactly, including -0 and subnormals', () => {
    const vector = Float32Array.from([0, -0, 1e-45, -3.4028234663852886e38, 0.1, Math.PI])
    expect(sameBits(decodeVector(encodeVector(vector), vector.length), vector)).toBe(true)
  })

  it('rejects values of the wrong length or holding NaN/Infinity', () => {
    const good = encodeVector(Float32Array.from([1, 2, 3]))
    expect(decodeVector(good, 4)).toBeUndefined()
    expect(decodeVector(good.slice(0, -1), 3)).toBeUndefined()
    expect(decodeVector(Buffer.alloc(0), 0)).toEqual(new Float32Array(0))
    expect(decodeVector(encodeVector(Float32Array.from([1, Number.NaN, 3])), 3)).toBeUndefined()
    expect(decodeVector(encodeVector(Float32Array.from([Number.POSITIVE_INFINITY, 2, 3])), 3)).toBeUndefined()
  })
})

describeEmbedderContract(
  'CachedEmbedder over the local model and the memory cache',
  async () => new CachedEmbedder(makeModel(), new MemoryCache(), { ttlSeconds: 60 }),
  { dimensions: 512, queryInstruction: '为这个句子生成表示以用于检索相关文章：' }
)

describe('CachedEmbedder with the real model', () => {
  it('returns the model vectors bit for bit, and serves repeats from the cache even once the model is closed', async () => {
    const model = makeModel()
    const reference = makeModel()
    const lookups: boolean[] = []
    const embedder = new CachedEmbedder(model, new MemoryCache(), { ttlSeconds: 60, onLookup: (hit) => lookups.push(hit) })
    const texts = ['咳嗽三周以上要做什么检查', 'API 流式返回', '咳嗽三周以上要做什么检查']
    const first = await embedder.embedQueries(texts)
    const direct = await reference.embedQueries(texts)
    expect(first.map((v, i) => sameBits(v, direct[i]))).toEqual([true, true, true])
    expect(lookups).toEqual([false, false]) // two distinct texts, both missed

    await model.close()
    const second = await embedder.embedQueries(['API 流式返回', '咳嗽三周以上要做什么检查'])
    expect(sameBits(second[0], direct[1])).toBe(true)
    expect(sameBits(second[1], direct[0])).toBe(true)
    expect(lookups.slice(2)).toEqual([true, true])
    // Only a new text reaches the (closed) model, and passages are never cached.
    await expect(embedder.embedQueries(['没见过的问题'])).rejects.toBeInstanceOf(BackendUnavailableError)
    await expect(embedder.embedPassages(['API 流式返回'])).rejects.toBeInstanceOf(BackendUnavailableError)
    await reference.close()
  })

  it('a cached value that is not a vector of the model width is a miss and is recomputed', async () => {
    const cache = new MemoryCache()
    const embedder = new CachedEmbedder(makeModel(), cache, { ttlSeconds: 60 })
    await cache.set(embeddingCacheKey(MODEL_NAME, '报销'), encodeVector(new Float32Array(8)), 60)
    const [vector] = await embedder.embedQueries(['报销'])
    if (vector === undefined) throw new Error('no vector')
    expect(vector.length).toBe(512)
    const norm = Math.sqrt(vector.reduce((s, x) => s + x * x, 0))
    expect(norm).toBeCloseTo(1, 5)
    expect(decodeVector((await cache.get(embeddingCacheKey(MODEL_NAME, '报销'))) ?? Buffer.alloc(0), 512)).toBeDefined()
    await embedder.close()
  })

  it('shares vectors across instances (replicas) through the real Redis', async () => {
    const keyPrefix = `test:${randomUUID()}:`
    const cacheA = new RedisCache({ url: inject('redisUrl'), keyPrefix, commandTimeoutMs: 1_000 })
    const cacheB = new RedisCache({ url: inject('redisUrl'), keyPrefix, commandTimeoutMs: 1_000 })
    expect(await cacheA.waitUntilReady(5_000)).toBe(true)
    expect(await cacheB.waitUntilReady(5_000)).toBe(true)
    const a = new CachedEmbedder(makeModel(), cacheA, { ttlSeconds: 60 })
    const [fromModel] = await a.embedQueries(['季度预算如何审批'])
    // The write is fire-and-forget; wait until it has landed.
    const key = embeddingCacheKey(MODEL_NAME, '季度预算如何审批')
    for (let i = 0; i < 100 && (await cacheB.get(key)) === undefined; i++) await new Promise((r) => setTimeout(r, 10))
    const closedModel = makeModel()
    await closedModel.close()
    const lookups: boolean[] = []
    const b = new CachedEmbedder(closedModel, cacheB, { ttlSeconds: 60, onLookup: (hit) => lookups.push(hit) })
    const [fromCache] = await b.embedQueries(['季度预算如何审批'])
    expect(lookups).toEqual([true])
    expect(sameBits(fromCache, fromModel)).toBe(true)
    await a.close()
    await cacheA.close()
    await cacheB.close()
  })
})
