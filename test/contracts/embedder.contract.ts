import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Embedder } from '../../src/providers/embedder/port.js'

export interface EmbedderExpectations {
  /** Width the model produces (512 for bge-small-zh-v1.5). */
  dimensions: number
  /** The query prefix the model needs, as the model's documentation states it; undefined when it takes none. */
  queryInstruction?: string
}

const dot = (a: Float32Array, b: Float32Array): number => a.reduce((sum, x, i) => sum + x * (b[i] ?? Number.NaN), 0)
const norm = (a: Float32Array): number => Math.sqrt(dot(a, a))

const TEXTS = [
  '咳嗽三周以上要做什么检查',
  '今天股市大涨，科技股领涨',
  'API 流式返回改造：鉴权中间件保持不变',
  '他每天早上六点起床跑步',
  'Redis 集群的主从切换'
]

/**
 * The promises of the `Embedder` port, one `it` each, run against every implementation.
 * `make` returns a ready embedder; the suite shares it (embedders hold no per-test state) and closes it.
 */
export function describeEmbedderContract(name: string, make: () => Promise<Embedder>, expected: EmbedderExpectations): void {
  describe(`Embedder contract: ${name}`, () => {
    let embedder: Embedder

    beforeAll(async () => {
      embedder = await make()
    })

    afterAll(async () => {
      await embedder.close()
    })

    it('reports the model dimensions and every vector has exactly that many components', async () => {
      expect(embedder.dimensions).toBe(expected.dimensions)
      const vectors = [...(await embedder.embedPassages(TEXTS)), ...(await embedder.embedQueries(TEXTS))]
      expect(vectors).toHaveLength(2 * TEXTS.length)
      for (const v of vectors) {
        expect(v).toBeInstanceOf(Float32Array)
        expect(v.length).toBe(expected.dimensions)
      }
    })

    it('vectors have unit L2 norm, so a dot product is the cosine', async () => {
      for (const v of [...(await embedder.embedPassages(TEXTS)), ...(await embedder.embedQueries(TEXTS))]) {
        expect(Math.abs(norm(v) - 1)).toBeLessThan(1e-3)
      }
    })

    it('output order equals input order', async () => {
      const batched = await embedder.embedPassages(TEXTS)
      const alone = await Promise.all(TEXTS.map(async (t) => (await embedder.embedPassages([t]))[0]!))
      const reversed = (await embedder.embedPassages([...TEXTS].reverse())).reverse()
      for (const [i, single] of alone.entries()) {
        // Each batched vector is nearest to the same text embedded alone (a batch may shift values slightly).
        const sims = batched.map((v) => dot(v, single))
        expect(sims.indexOf(Math.max(...sims))).toBe(i)
        expect(sims[i]).toBeGreaterThan(0.98)
        expect(dot(reversed[i]!, single)).toBeGreaterThan(0.98)
      }
    })

    it('an empty input gives an empty output', async () => {
      expect(await embedder.embedPassages([])).toEqual([])
      expect(await embedder.embedQueries([])).toEqual([])
    })

    it('a query is embedded with the model instruction and a passage without', async () => {
      const text = TEXTS[0]!
      const [query] = await embedder.embedQueries([text])
      const [passage] = await embedder.embedPassages([text])
      if (expected.queryInstruction === undefined) {
        expect(dot(query!, passage!)).toBeGreaterThan(0.9999)
        return
      }
      const [prefixed] = await embedder.embedPassages([expected.queryInstruction + text])
      expect(dot(query!, prefixed!)).toBeGreaterThan(0.9999)
      expect(dot(query!, passage!)).toBeLessThan(0.99)
    })

    it('health reports the backend as up', async () => {
      const health = await embedder.health()
      expect(health.ok).toBe(true)
      expect(health.latency_ms).toBeGreaterThanOrEqual(0)
    })
  })
}
