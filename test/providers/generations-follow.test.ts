import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createRedisClient } from '../../src/providers/cache/redis.js'
import { RedisGenerationStore } from '../../src/providers/generations/redis.js'

// Two stores over the run's real Redis, as two replicas: one records writes, the other follows them. What it must
// hear is derived from the writes made: each hybrid write, in order, with the hybrid version a read gives after it.
const client = createRedisClient(inject('redisUrl'), { commandTimeoutMs: 1000 })
client.on('error', () => undefined)
const prefix = `test:follow:${randomBytes(3).toString('hex')}:`
const writer = new RedisGenerationStore({ client, keyPrefix: prefix })
beforeAll(async () => { await new Promise((resolve) => client.once('ready', resolve)) })
afterAll(() => client.disconnect())

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until(check: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`)
    await sleep(10)
  }
}

/** A follower over its own store (and client), with what it heard. */
async function follower() {
  const own = createRedisClient(inject('redisUrl'), { commandTimeoutMs: 1000 })
  own.on('error', () => undefined)
  const store = new RedisGenerationStore({ client: own, keyPrefix: prefix })
  const heard: [string, string][] = []
  store.follow((namespace, version) => heard.push([namespace, version]))
  // subscribed once the server lists the follower's connection with one subscription
  const deadline = Date.now() + 5_000
  for (;;) {
    const list = await client.call('CLIENT', 'LIST', 'TYPE', 'pubsub') as string
    if (list.includes(`name=${prefix}follower`) && /sub=1/.test(list)) break
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
      const list = await client.call('CLIENT', 'LIST', 'TYPE', 'pubsub') as string
      const id = list.split('\n').find((line) => line.includes(` name=${prefix}follower `))?.match(/^id=(\d+)/)?.[1]
      expect(id).toBeDefined()
      expect(await client.call('CLIENT', 'KILL', 'ID', id!)).toBe(1)
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
