/**
 * Issue 45: on a Redis Cluster the write lock of a namespace takes the namespace's hash tag, so it sits on the master
 * of the namespace's generations (`CLUSTER KEYSLOT` of both keys is one slot, and the key is found on that master); and
 * an upgrade from the untagged key is safe while old and new replicas run side by side: a new writer takes the old,
 * untagged key first, so an old-format lock held (by a lock of the code before the tag, which knows only that key)
 * keeps it out, and the new writer's lock keeps an old-format writer out. With the transition off, the new writer does
 * not wait for the old one: the control that shows what the untagged key is for.
 */
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { lockKeys, RedisWriteLock } from '../../src/corpus/write-lock.js'
import { BackendTimeoutError } from '../../src/providers/errors.js'
import { createRedisClient, type RedisClient } from '../../src/providers/redis-client.js'
import { onNode, REDIS_CLUSTER_SKIP, useSharedRedisCluster, type RedisClusterServer } from '../helpers/redis-cluster.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('lockKeys', () => {
  it('names the tagged key on a cluster, the untagged one first during the transition, the old key elsewhere', () => {
    expect(lockKeys('documents:ns1', { cluster: false, untagged: true })).toEqual([{ key: 'recall:write-lock:documents:ns1', acknowledged: true }])
    expect(lockKeys('documents:ns1', { cluster: true, untagged: false })).toEqual([{ key: 'recall:write-lock:documents:{ns1}', acknowledged: true }])
    expect(lockKeys('graph:ns1', { cluster: true, untagged: true })).toEqual([
      { key: 'recall:write-lock:graph:ns1', acknowledged: false },
      { key: 'recall:write-lock:graph:{ns1}', acknowledged: true }
    ])
  })
})

const shared = inject('redisCluster')
if (!shared) console.warn(`the write lock's hash tag: ${REDIS_CLUSTER_SKIP}`)

describe.skipIf(!shared)('the write lock on the run\'s Redis Cluster', () => {
  let cluster: RedisClusterServer
  let client: RedisClient
  beforeAll(async () => {
    cluster = useSharedRedisCluster(shared!)
    await cluster.waitHealthy(30_000)
    client = createRedisClient(shared!.url, { commandTimeoutMs: 2_000 })
    client.on('error', () => undefined)
    if (client.status !== 'ready') await once(client, 'ready')
  })
  afterAll(async () => { await client?.quit() })

  /** A lock as this version takes it on a cluster; `untagged`: the upgrade's transition. */
  const newLock = (untagged: boolean, waitMs = 5_000) =>
    new RedisWriteLock({ client, leaseMs: 3_000, waitMs, keys: (name) => lockKeys(name, { cluster: true, untagged }) })
  /** A lock as recall took it before the tag: the untagged key alone. */
  const oldLock = (waitMs = 5_000) => new RedisWriteLock({ client, leaseMs: 3_000, waitMs })

  it('holds the tagged key on the master of the namespace\'s generations: one slot, and the key is there', async () => {
    const namespace = `tag-${randomUUID().slice(0, 8)}`
    const tagged = `recall:write-lock:documents:{${namespace}}`
    const generations = `recall:generations:{${namespace}}`
    const master = await cluster.masterOf(generations)
    const seen = await newLock(false).exclusive(`documents:${namespace}`, () => onNode(master.port, async (node) => ({
      slots: [await node.cluster('KEYSLOT', tagged), await node.cluster('KEYSLOT', generations)],
      held: await node.exists(tagged),
      untaggedHeld: await client.exists(`recall:write-lock:documents:${namespace}`)
    })))
    expect(seen.slots[0]).toBe(seen.slots[1])
    expect(seen.held).toBe(1)
    expect(seen.untaggedHeld).toBe(0)
    expect(await client.exists(tagged)).toBe(0) // given back
  })

  it('a new writer waits while an old-format lock is held, and takes both keys once it is given back', async () => {
    const namespace = `upg-${randomUUID().slice(0, 8)}`
    const name = `documents:${namespace}`
    const events: string[] = []
    let release!: () => void
    const oldHolds = oldLock().exclusive(name, async () => {
      events.push('old:start')
      await new Promise<void>((resolve) => { release = resolve })
      events.push('old:end')
    })
    while (events.length === 0) await sleep(5)
    const newRuns = newLock(true).exclusive(name, async () => {
      events.push('new:start')
      return Promise.all([client.exists(`recall:write-lock:${name}`), client.exists(`recall:write-lock:documents:{${namespace}}`)])
    })
    await sleep(600) // the new writer retries meanwhile
    expect(events).toEqual(['old:start'])
    release()
    await oldHolds
    expect(await newRuns).toEqual([1, 1])
    expect(events).toEqual(['old:start', 'old:end', 'new:start'])
  })

  it('an old-format writer cannot take the lock while a new writer holds it', async () => {
    const name = `documents:upg-${randomUUID().slice(0, 8)}`
    let ran = false
    const refused = await newLock(true).exclusive(name, () => oldLock(400).exclusive(name, async () => { ran = true }).catch((e: unknown) => e))
    expect(refused).toBeInstanceOf(BackendTimeoutError)
    expect(ran).toBe(false)
  })

  it('control: with the transition off, a new writer does not see an old-format lock (both would write at once)', async () => {
    const name = `documents:upg-${randomUUID().slice(0, 8)}`
    const overlap = await oldLock().exclusive(name, () => newLock(false, 400).exclusive(name, async () => 'both held'))
    expect(overlap).toBe('both held')
  })
})
