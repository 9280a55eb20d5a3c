/**
 * `WAIT` after the write lock and the generation records (REDIS_WAIT_REPLICAS, docs/deployment.md#redis), on the
 * run's Redis Cluster: with the replica of the master holding a namespace frozen (SIGSTOP: it takes the master's
 * stream but cannot acknowledge it), a record and a lock asking one replica to confirm them fail, naming the
 * missing confirmation, after the wait; the same record without WAIT succeeds at once (what recall did before). With
 * the replica running, a confirmed record is on the replica the moment it is answered.
 */
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { RedisWriteLock } from '../../src/corpus/write-lock.js'
import { BackendUnavailableError } from '../../src/providers/errors.js'
import { RedisGenerationStore } from '../../src/providers/generations/redis.js'
import { createRedisClient, type RedisClient, type ReplicaAcknowledgement } from '../../src/providers/redis-client.js'
import { useSharedRedisCluster } from '../helpers/redis-cluster.js'

const shared = inject('redisCluster')
if (!shared) console.warn('redis WAIT: SKIPPED: the run started no Redis Cluster of its own (test/setup/redis-cluster.ts said why at start-up)')

/** A direct connection to one node, for INFO and for reading a replica. */
async function node(port: number): Promise<Redis> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 })
  client.on('error', () => undefined)
  await client.connect()
  return client
}

const infoField = (info: string, field: string) => new RegExp(`^${field}:(.*)$`, 'm').exec(info)?.[1]?.trim()

describe.skipIf(!shared)('WAIT on a Redis Cluster (3 masters, one replica each)', () => {
  const namespace = `wait-${randomUUID().slice(0, 8)}`
  const key = `recall:generations:{${namespace}}`
  const ACK: ReplicaAcknowledgement = { replicas: 1, timeoutMs: 300 }
  let client: RedisClient
  let master: Redis
  let replica: Redis
  let replicaPid = 0

  beforeAll(async () => {
    const cluster = useSharedRedisCluster(shared!)
    await cluster.waitHealthy(30_000, key)
    // the command timeout is above the wait, as the service's write connection has it
    client = createRedisClient(shared!.url, { commandTimeoutMs: 2_000 })
    client.on('error', () => undefined)
    if (client.status !== 'ready') await once(client, 'ready')
    master = await node((await cluster.masterOf(key)).port)
    const replicaPort = Number(/port=(\d+)/.exec(infoField(await master.info('replication'), 'slave0') ?? '')?.[1])
    expect(replicaPort).toBeGreaterThan(0)
    replica = await node(replicaPort)
    replicaPid = Number(infoField(await replica.info('server'), 'process_id'))
    expect(replicaPid).toBeGreaterThan(0)
  })
  afterAll(async () => {
    if (replicaPid) process.kill(replicaPid, 'SIGCONT')
    for (const c of [client, master, replica]) c?.disconnect()
  })

  /** Runs `during` while the replica is frozen, for as short a time as it takes (the run's other files share it). */
  async function frozen<T>(during: () => Promise<T>): Promise<T> {
    process.kill(replicaPid, 'SIGSTOP')
    try {
      return await during()
    } finally {
      process.kill(replicaPid, 'SIGCONT')
    }
  }

  it('a confirmed record is on the replica when it is answered', async () => {
    const store = new RedisGenerationStore({ client, writes: { client, acknowledgement: ACK } })
    for (let i = 0; i < 20; i++) {
      const generation = await store.recordWrite(namespace, ['hybrid'], { docIds: [`d${i}`] })
      // READONLY: a cluster replica answers reads of its master's slots
      await replica.call('READONLY')
      expect(Number(await replica.hget(key, 'gen'))).toBe(generation)
      expect(await replica.zscore(`${key}:changes`, `d${i}`)).toBe(String(generation))
    }
  })

  it('with the replica frozen, a record asking for it fails after the wait, naming the missing confirmation; without WAIT it succeeds', async () => {
    const confirmed = new RedisGenerationStore({ client, writes: { client, acknowledgement: ACK } })
    const unconfirmed = new RedisGenerationStore({ client })
    const before = Number(await master.hget(key, 'gen'))
    const { took, error, plain } = await frozen(async () => {
      const started = performance.now()
      const error = await confirmed.recordWrite(namespace, ['hybrid']).then(() => undefined, (e: unknown) => e)
      const took = performance.now() - started
      const plain = await unconfirmed.recordWrite(namespace, ['hybrid'])
      return { took, error, plain }
    })
    expect(error).toBeInstanceOf(BackendUnavailableError)
    expect((error as Error).message).toContain('0 of the 1 replica(s) REDIS_WAIT_REPLICAS asks for confirmed it within REDIS_WAIT_TIMEOUT_MS=300 ms')
    expect(took).toBeGreaterThanOrEqual(ACK.timeoutMs - 5) // WAIT waited out its timeout in Redis
    // both scripts ran on the master: the unconfirmed record is there, only not known to be replicated
    expect(plain).toBe(before + 2)
  })

  it('with the replica frozen, a lock asking for it is given back and its write never runs', async () => {
    const keyPrefix = `recall:write-lock:{${namespace}}:`
    const lock = new RedisWriteLock({ client, leaseMs: 5_000, waitMs: 1_000, keyPrefix, acknowledgement: ACK })
    let ran = false
    const error = await frozen(() => lock.exclusive('documents', async () => { ran = true }).then(() => undefined, (e: unknown) => e))
    expect(error).toBeInstanceOf(BackendUnavailableError)
    expect((error as Error).message).toMatch(/the write lock of documents was not confirmed: the master holds the write, but 0 of the 1 replica/)
    expect(ran).toBe(false)
    expect(await master.get(`${keyPrefix}documents`)).toBeNull()
    // and with the replica running again, the same lock is taken and confirmed
    expect(await lock.exclusive('documents', async () => 'written')).toBe('written')
  })
})
