import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { Redis } from 'ioredis'
import { afterAll, inject } from 'vitest'
import { RedisSoleWriterRegistry } from '../../src/corpus/sole-writer/index.js'
import { createRedisClient, type RedisClient } from '../../src/providers/redis-client.js'
import { describeSoleWriterRegistryContract } from '../contracts/sole-writer-registry.contract.js'
import { REDIS_CLUSTER_SKIP } from '../helpers/redis-cluster.js'

// One client per registry, as each process has its own connection.
const clients: RedisClient[] = []
afterAll(async () => { await Promise.all(clients.map((c) => c.quit())) })

describeSoleWriterRegistryContract('redis', async () => {
  const key = `test:sole-writer:${randomBytes(6).toString('hex')}`
  return {
    open() {
      const client = new Redis(inject('redisUrl'))
      clients.push(client)
      return new RedisSoleWriterRegistry({ client, key })
    },
    async drop() {
      await clients[0]?.del(key)
    }
  }
})

// The same on the run's Redis Cluster, with the client the service makes for a `redis+cluster://` REDIS_URL.
const clusterUrl = inject('redisClusterUrl')
if (clusterUrl) {
  describeSoleWriterRegistryContract('redis cluster', async () => {
    const key = `test:sole-writer:${randomBytes(6).toString('hex')}`
    const opened: RedisClient[] = []
    return {
      open() {
        const client = createRedisClient(clusterUrl, { commandTimeoutMs: 1_000 })
        client.on('error', () => undefined)
        clients.push(client)
        opened.push(client)
        const registry = new RedisSoleWriterRegistry({ client, key })
        const ready = client.status === 'ready' ? Promise.resolve() : once(client, 'ready').then(() => undefined)
        return {
          where: registry.where,
          claim: async (self, leaseMs) => { await ready; return registry.claim(self, leaseMs) },
          release: async (self) => { await ready; return registry.release(self) }
        }
      },
      async drop() {
        await opened[0]?.del(key)
      }
    }
  })
} else {
  console.warn(`the sole-writer registry on a Redis Cluster: ${REDIS_CLUSTER_SKIP}`)
}
