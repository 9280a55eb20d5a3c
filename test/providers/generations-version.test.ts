import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createRedisClient } from '../../src/providers/cache/redis.js'
import { MemoryGenerationStore } from '../../src/providers/generations/memory.js'
import type { GenerationStore } from '../../src/providers/generations/port.js'
import { RedisGenerationStore } from '../../src/providers/generations/redis.js'
import { formatVersion, parseVersion } from '../../src/providers/generations/version.js'

describe('a generation store version, <epoch>:<generation>', () => {
  it.each([
    ['3f9a1c2b4d5e', 1_733_000_000_000_001, '3f9a1c2b4d5e:1733000000000001'],
    ['3f9a1c2b', 0, '3f9a1c2b:0'],
    ['a:b', 7, 'a:b:7']
  ])('writes epoch %j and generation %d as %j and reads them back', (epoch, generation, version) => {
    expect(formatVersion(epoch, generation)).toBe(version)
    expect(parseVersion(version)).toEqual({ epoch, generation })
  })

  it.each([
    [''], ['3f9a1c2b'], [':5'], ['3f9a1c2b:'], ['3f9a1c2b:x'], ['3f9a1c2b:1.5'], ['3f9a1c2b:-1'], ['3f9a1c2b:1e3'],
    ['3f9a1c2b: 1'], ['3f9a1c2b:12345678901234567890']
  ])('is not read from %j', (version) => {
    expect(parseVersion(version)).toBeUndefined()
  })

  it.each([['', 1], ['3f9a1c2b', -1], ['3f9a1c2b', 1.5], ['3f9a1c2b', Number.NaN], ['3f9a1c2b', 2 ** 53]])(
    'is not written from epoch %j and generation %d', (epoch, generation) => {
      expect(() => formatVersion(epoch, generation)).toThrow(RangeError)
    })
})

// A store's versions read back as its own position: the epoch its change log names and the generation its write returned.
const client = createRedisClient(inject('redisUrl'), { commandTimeoutMs: 1000 })
client.on('error', () => undefined)
beforeAll(async () => { await new Promise((resolve) => client.once('ready', resolve)) })
afterAll(() => client.disconnect())

describe.each([
  ['memory', () => new MemoryGenerationStore()],
  ['redis', () => new RedisGenerationStore({ client, keyPrefix: `test:version:${randomBytes(3).toString('hex')}:` })]
] as [string, () => GenerationStore][])('the %s generation store\'s versions', (_, make) => {
  it('name its epoch and the generation of each kind\'s last write', async () => {
    const store = make()
    const first = await store.recordWrite('ns', ['hybrid'])
    const second = await store.recordWrite('ns', ['episodic'])
    const { position } = await store.documentChanges('ns', undefined, 10)
    const { versions } = await store.read('ns')
    expect(parseVersion(versions.hybrid)).toEqual({ epoch: position.epoch, generation: first })
    expect(parseVersion(versions.episodic)).toEqual({ epoch: position.epoch, generation: second })
    expect(parseVersion(versions.graphrag)).toEqual({ epoch: position.epoch, generation: 0 })
    expect(position.generation).toBe(first)
    await store.close()
  })
})
