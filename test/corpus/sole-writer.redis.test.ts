import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, inject } from 'vitest'
import { RedisSoleWriterRegistry } from '../../src/corpus/sole-writer/index.js'
import { describeSoleWriterRegistryContract } from '../contracts/sole-writer-registry.contract.js'

// One client per registry, as each process has its own connection.
const clients: Redis[] = []
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
