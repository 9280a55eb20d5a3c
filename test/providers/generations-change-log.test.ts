import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createRedisClient } from '../../src/providers/cache/redis.js'
import { RedisGenerationStore } from '../../src/providers/generations/redis.js'
import { REDIS_CLUSTER_SKIP } from '../helpers/redis-cluster.js'

// The change log against the run's real Redis, and against its Redis Cluster, where the namespace's hash and log
// are `<prefix>{<ns>}` and `<prefix>{<ns>}:changes` (one slot: the scripts touch both). Each expectation is derived
// by hand from the writes made: a write's documents are listed after every position before its generation, and
// nothing is listed once the log cannot prove it holds every change since the position asked about.
const clusterUrl = inject('redisClusterUrl')
if (!clusterUrl) console.warn(`the change log on a Redis Cluster: ${REDIS_CLUSTER_SKIP}`)

describe.each([
  { server: 'one redis-server', url: inject('redisUrl'), key: (ns: string) => ns },
  { server: 'a Redis Cluster', url: clusterUrl, key: (ns: string) => `{${ns}}` }
].filter((run) => run.url))('on $server', ({ url, key }) => {
  const client = createRedisClient(url, { commandTimeoutMs: 1000 })
  client.on('error', () => undefined)
  const prefix = `test:changes:${randomBytes(3).toString('hex')}:`
  const store = new RedisGenerationStore({ client, keyPrefix: prefix, changeLogLength: 3 })
  beforeAll(async () => { if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve)) })
  afterAll(() => client.disconnect())

  const sorted = (ids: string[] | undefined) => ids && [...ids].sort()

  describe('the change log of a namespace\'s documents', () => {
    it('lists the documents written after a position, each once, up to the newest write', async () => {
      const ns = 'log-a'
      const start = await store.documentChanges(ns, undefined, 10)
      const g1 = await store.recordWrite(ns, ['hybrid'], { docIds: ['a', 'b'] })
      const at1 = await store.documentChanges(ns, undefined, 10)
      expect(at1.position).toEqual({ epoch: start.position.epoch, generation: g1 })
      // the log starts with its first write; no hybrid write came before it (the position's generation is 0), so
      // from the position before it the log is complete: it holds that write's documents
      expect(start.position.generation).toBe(0)
      expect(sorted((await store.documentChanges(ns, start.position, 10)).docIds)).toEqual(['a', 'b'])
      const g2 = await store.recordWrite(ns, ['hybrid'], { docIds: ['b', 'c'] })
      await store.recordWrite(ns, ['graphrag'])
      const since1 = await store.documentChanges(ns, at1.position, 10)
      expect(sorted(since1.docIds)).toEqual(['b', 'c'])
      expect(since1.position.generation).toBe(g2)
      const g4 = await store.recordWrite(ns, ['hybrid'], { docIds: ['a'] })
      expect(sorted((await store.documentChanges(ns, at1.position, 10)).docIds)).toEqual(['a', 'b', 'c'])
      expect((await store.documentChanges(ns, { ...at1.position, generation: g2 }, 10)).docIds).toEqual(['a'])
      expect((await store.documentChanges(ns, { ...at1.position, generation: g4 }, 10)).docIds).toEqual([])
      // more documents than the caller's limit: none listed (reading the namespace is as cheap)
      expect((await store.documentChanges(ns, at1.position, 2)).docIds).toBeUndefined()
      // another epoch (the hash was lost): nothing can be shown
      expect((await store.documentChanges(ns, { epoch: 'other', generation: g2 }, 10)).docIds).toBeUndefined()
    })

    it('trimmed past a position, or after a write of unknown documents, lists nothing for it', async () => {
      const ns = 'log-b'
      await store.recordWrite(ns, ['hybrid'], { docIds: ['a'] })
      const p1 = (await store.documentChanges(ns, undefined, 10)).position
      await store.recordWrite(ns, ['hybrid'], { docIds: ['b'] })
      const p2 = (await store.documentChanges(ns, undefined, 10)).position
      await store.recordWrite(ns, ['hybrid'], { docIds: ['c'] })
      expect(sorted((await store.documentChanges(ns, p1, 10)).docIds)).toEqual(['b', 'c'])
      // a 4th document: the log keeps 3, so `a` (written at p1) goes; p1 still needs nothing before it
      await store.recordWrite(ns, ['hybrid'], { docIds: ['d'] })
      expect(sorted((await store.documentChanges(ns, p1, 10)).docIds)).toEqual(['b', 'c', 'd'])
      // a 5th: `b` (written at p2) goes, so from p1 the log is incomplete, from p2 it is not
      await store.recordWrite(ns, ['hybrid'], { docIds: ['e'] })
      expect((await store.documentChanges(ns, p1, 10)).docIds).toBeUndefined()
      expect(sorted((await store.documentChanges(ns, p2, 10)).docIds)).toEqual(['c', 'd', 'e'])
      // a hybrid write of unknown documents (a namespace drop): every earlier position is incomplete
      await store.recordWrite(ns, ['hybrid', 'graphrag', 'episodic'])
      const afterDrop = (await store.documentChanges(ns, undefined, 10)).position
      expect((await store.documentChanges(ns, p2, 10)).docIds).toBeUndefined()
      await store.recordWrite(ns, ['hybrid'], { docIds: ['f'] })
      expect((await store.documentChanges(ns, afterDrop, 10)).docIds).toEqual(['f'])
    })

    it('a lost log or a lost hash lists nothing for positions before the loss', async () => {
      const ns = 'log-c'
      await store.recordWrite(ns, ['hybrid'], { docIds: ['a'] })
      const p1 = (await store.documentChanges(ns, undefined, 10)).position
      await store.recordWrite(ns, ['hybrid'], { docIds: ['b'] })
      expect((await store.documentChanges(ns, p1, 10)).docIds).toEqual(['b'])
      await client.del(`${prefix}${key(ns)}:changes`)
      expect((await store.documentChanges(ns, p1, 10)).docIds).toBeUndefined()
      await store.recordWrite(ns, ['hybrid'], { docIds: ['c'] })
      expect((await store.documentChanges(ns, p1, 10)).docIds).toBeUndefined()
      const p3 = (await store.documentChanges(ns, undefined, 10)).position
      await client.del(`${prefix}${key(ns)}`)
      await store.recordWrite(ns, ['hybrid'], { docIds: ['d'] })
      const now = await store.documentChanges(ns, p3, 10)
      expect(now.position.epoch).not.toBe(p3.epoch)
      expect(now.docIds).toBeUndefined()
    })
  })
})
