import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createRedisClient } from '../../src/providers/cache/redis.js'
import { RedisGenerationStore } from '../../src/providers/generations/redis.js'
import { REDIS_CLUSTER_SKIP } from '../helpers/redis-cluster.js'

// The write window beside the change log, against the run's real Redis and its Redis Cluster (where the window's two
// keys must share the namespace's slot with its hash and log: the scripts touch all four). Each expectation follows
// from the writes made: a reader gets a document's state only from the write the log lists it at, and only when that
// write marked the document and its mark still stood when it was recorded.
const clusterUrl = inject('redisClusterUrl')
if (!clusterUrl) console.warn(`the write window on a Redis Cluster: ${REDIS_CLUSTER_SKIP}`)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe.each([
  { server: 'one redis-server', url: inject('redisUrl') },
  { server: 'a Redis Cluster', url: clusterUrl }
].filter((run) => run.url))('the write window on $server', ({ url }) => {
  const client = createRedisClient(url, { commandTimeoutMs: 1000 })
  client.on('error', () => undefined)
  const prefix = `test:window:${randomBytes(3).toString('hex')}:`
  const window = { documents: 3, documentBytes: 64, ttlMs: 60_000 }
  const store = new RedisGenerationStore({ client, keyPrefix: prefix, window })
  beforeAll(async () => { if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve)) })
  afterAll(() => client.disconnect())

  /** A write of `states` (id -> state) as the write path makes it: mark under the lock, then record with the states. */
  const write = async (store: RedisGenerationStore, ns: string, states: Record<string, string>, token = randomBytes(4).toString('hex')) => {
    expect(await store.markWriting(ns, Object.keys(states), token)).toBe(true)
    return store.recordWrite(ns, ['hybrid'], { docIds: Object.keys(states), window: { token, states: new Map(Object.entries(states)) } })
  }
  const kept = async (ns: string, since: { epoch: string; generation: number }) =>
    Object.fromEntries((await store.documentChanges(ns, since, 100)).window ?? [])

  it('gives each document its state from the last write that named it, and none once a later write kept none', async () => {
    const ns = 'w-a'
    const start = (await store.documentChanges(ns, undefined, 100)).position
    await write(store, ns, { a: '[1]', b: '[2]' })
    await write(store, ns, { b: '[3]' })
    expect(await kept(ns, start)).toEqual({ a: '[1]', b: '[3]' })
    // a write recorded without states (a failed write, a replay): its document is read back, the others are kept
    await store.recordWrite(ns, ['hybrid'], { docIds: ['a'] })
    expect(await kept(ns, start)).toEqual({ b: '[3]' })
    // a document marked and recorded without a state of its own (not written, or over the size bound): none
    await write(store, ns, { b: '' })
    expect(await kept(ns, start)).toEqual({})
    await write(store, ns, { b: 'x'.repeat(window.documentBytes + 1) })
    expect(await kept(ns, start)).toEqual({})
    await write(store, ns, { b: 'y'.repeat(window.documentBytes) })
    expect(await kept(ns, start)).toEqual({ b: 'y'.repeat(window.documentBytes) })
  })

  it('keeps no state of a writer whose mark a later writer took, whichever records first', async () => {
    const ns = 'w-b'
    const start = (await store.documentChanges(ns, undefined, 100)).position
    // A holds the lock, then B: both marks are made in that order, the records come in either order
    for (const order of ['B first', 'A first'] as const) {
      const doc = `d-${order[0]}`
      await store.markWriting(ns, [doc], 'tokA')
      await store.markWriting(ns, [doc], 'tokB')
      const recordA = () => store.recordWrite(ns, ['hybrid'], { docIds: [doc], window: { token: 'tokA', states: new Map([[doc, '"A"']]) } })
      const recordB = () => store.recordWrite(ns, ['hybrid'], { docIds: [doc], window: { token: 'tokB', states: new Map([[doc, '"B"']]) } })
      if (order === 'B first') { await recordB(); await recordA() } else { await recordA(); await recordB() }
      // B's write is what the store holds: kept when B's record is the last one naming the document; else read back
      expect((await kept(ns, start))[doc], order).toBe(order === 'A first' ? '"B"' : undefined)
    }
  })

  it('a document being written (marked, not yet recorded) keeps no state', async () => {
    const ns = 'w-c'
    const start = (await store.documentChanges(ns, undefined, 100)).position
    await write(store, ns, { a: '[1]' })
    await store.markWriting(ns, ['a'], 'unrecorded')
    expect(await kept(ns, start)).toEqual({})
  })

  it('keeps at most `documents` states, the oldest going first, and forgets them all after `ttlMs` without writes', async () => {
    const ns = 'w-d'
    const start = (await store.documentChanges(ns, undefined, 100)).position
    for (const id of ['a', 'b', 'c', 'd']) await write(store, ns, { [id]: `"${id}"` })
    expect(await kept(ns, start)).toEqual({ b: '"b"', c: '"c"', d: '"d"' })
    const brief = new RedisGenerationStore({ client, keyPrefix: `${prefix}brief:`, window: { ...window, ttlMs: 300 } })
    const from = (await brief.documentChanges(ns, undefined, 100)).position
    await write(brief, ns, { a: '"a"' })
    expect(Object.fromEntries((await brief.documentChanges(ns, from, 100)).window!)).toEqual({ a: '"a"' })
    await sleep(600)
    expect(Object.fromEntries((await brief.documentChanges(ns, from, 100)).window!)).toEqual({})
    // the log itself is kept: the document is still listed, and read back
    expect((await brief.documentChanges(ns, from, 100)).docIds).toEqual(['a'])
  })

  it('a store without a window marks nothing and its readers get no states', async () => {
    const ns = 'w-e'
    const none = new RedisGenerationStore({ client, keyPrefix: prefix })
    const start = (await none.documentChanges(ns, undefined, 100)).position
    expect(await none.markWriting(ns, ['a'], 't')).toBe(false)
    await none.recordWrite(ns, ['hybrid'], { docIds: ['a'], window: { token: 't', states: new Map([['a', '[1]']]) } })
    expect((await none.documentChanges(ns, start, 100)).window).toBeUndefined()
    expect(await kept(ns, start)).toEqual({})
  })
})
