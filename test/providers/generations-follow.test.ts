import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createRedisClient } from '../../src/providers/cache/redis.js'
import { RedisGenerationStore } from '../../src/providers/generations/redis.js'
import { isCluster, type RedisClient } from '../../src/providers/redis-client.js'
import { REDIS_CLUSTER_SKIP } from '../helpers/redis-cluster.js'

// Two stores over the run's real Redis, and over its Redis Cluster, as two replicas: one records writes, the other
// follows them. What it must hear is derived from the writes made: each hybrid write, in order, with the hybrid
// version a read gives after it. On a cluster the follower listens on one node and every node sees every PUBLISH.
const clusterUrl = inject('redisClusterUrl')
if (!clusterUrl) console.warn(`following writes on a Redis Cluster: ${REDIS_CLUSTER_SKIP}`)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until(check: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`)
    await sleep(10)
  }
}

/** `CLIENT LIST TYPE pubsub` of every node the client reaches, each line with the node's client. */
async function pubsubClients(client: RedisClient): Promise<Array<{ line: string; node: RedisClient }>> {
  const nodes: RedisClient[] = isCluster(client) ? client.nodes('all') : [client]
  const out: Array<{ line: string; node: RedisClient }> = []
  for (const node of nodes) {
    const list = await node.call('CLIENT', 'LIST', 'TYPE', 'pubsub') as string
    for (const line of list.split('\n')) if (line) out.push({ line, node })
  }
  return out
}

describe.each([
  { server: 'one redis-server', url: inject('redisUrl') },
  { server: 'a Redis Cluster', url: clusterUrl }
].filter((run) => run.url))('on $server', ({ url }) => {
  const client = createRedisClient(url, { commandTimeoutMs: 1000 })
  client.on('error', () => undefined)
  const prefix = `test:follow:${randomBytes(3).toString('hex')}:`
  const writer = new RedisGenerationStore({ client, keyPrefix: prefix })
  beforeAll(async () => { if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve)) })
  afterAll(() => client.disconnect())
  // the follower's connection, by its name (on a cluster ioredis puts its own part before it)
  const ours = (line: string) => new RegExp(` name=\\S*${prefix}follower `).test(line)

  /** A follower over its own store (and client), with what it heard. */
  async function follower() {
    const own = createRedisClient(url, { commandTimeoutMs: 1000 })
    await new Promise((resolve) => own.once('ready', resolve))
    own.on('error', () => undefined)
    const store = new RedisGenerationStore({ client: own, keyPrefix: prefix })
    const heard: [string, string][] = []
    store.follow((namespace, version) => heard.push([namespace, version]))
    // subscribed once the server lists the follower's connection with one subscription
    const deadline = Date.now() + 5_000
    for (;;) {
      if ((await pubsubClients(client)).some(({ line }) => ours(line) && / sub=1 /.test(line))) break
      if (Date.now() > deadline) throw new Error('the follower never subscribed')
      await sleep(20)
    }
    return {
      heard, store,
      async close() {
        await store.close()
        own.disconnect()
      }
    }
  }

  describe('following the writes every replica records', () => {
    it('hears each hybrid write, in order, with the hybrid version a read then gives; no other write', async () => {
      const f = await follower()
      try {
        await writer.recordWrite('fa', ['hybrid'], { docIds: ['a'] })
        const v1 = (await writer.read('fa')).versions.hybrid
        await writer.recordWrite('fa', ['graphrag'])
        await writer.recordWrite('fa', ['episodic'])
        await writer.recordWrite('fb', ['hybrid', 'graphrag']) // a namespace drop: unknown documents
        const v2 = (await writer.read('fb')).versions.hybrid
        await writer.recordWrite('fa', ['hybrid'], { docIds: ['b', 'c'] })
        const v3 = (await writer.read('fa')).versions.hybrid
        await until(() => f.heard.length >= 3, 'three messages')
        await sleep(100) // nothing more comes
        expect(f.heard).toEqual([['fa', v1], ['fb', v2], ['fa', v3]])
        expect(v1).not.toBe(v3)
      } finally {
        await f.close()
      }
    })

    it('subscribes again after its connection is killed, and hears nothing once closed', async () => {
      const f = await follower()
      try {
        // only this follower's connection (the run's Redis serves other tests' replicas too)
        const found = (await pubsubClients(client)).find(({ line }) => ours(line))
        const id = found?.line.match(/^id=(\d+)/)?.[1]
        expect(id).toBeDefined()
        expect(await found!.node.call('CLIENT', 'KILL', 'ID', id!)).toBe(1)
        // writes made while it reconnects are lost to it (followers never depend on them): write until one arrives
        const deadline = Date.now() + 10_000
        while (f.heard.length === 0) {
          if (Date.now() > deadline) throw new Error('the follower never heard a write after its connection was killed')
          await writer.recordWrite('fc', ['hybrid'], { docIds: ['x'] })
          await sleep(50)
        }
        expect(f.heard.at(-1)).toEqual(['fc', (await writer.read('fc')).versions.hybrid])
      } finally {
        await f.close()
      }
      const heard = f.heard.length
      await writer.recordWrite('fc', ['hybrid'], { docIds: ['y'] })
      await sleep(200)
      expect(f.heard.length).toBe(heard)
    })
  })
})
