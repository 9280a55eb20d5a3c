import { describe, expect, it } from 'vitest'
import { MemoryCache } from '../../src/providers/cache/memory.js'
import { createCache } from '../../src/providers/cache/index.js'
import { describeCacheContract } from '../contracts/cache.contract.js'

describeCacheContract('memory', async () => new MemoryCache({ maxEntries: 100 }))

describe('MemoryCache', () => {
  it('evicts the least recently used entry once maxEntries is exceeded', async () => {
    const cache = new MemoryCache({ maxEntries: 3 })
    await cache.set('a', '1', 60)
    await cache.set('b', '2', 60)
    await cache.set('c', '3', 60)
    expect((await cache.get('a'))?.toString()).toBe('1') // a is now the most recent; b is the least
    await cache.set('d', '4', 60)
    expect(cache.size).toBe(3)
    expect(await cache.get('b')).toBeUndefined()
    expect((await cache.get('a'))?.toString()).toBe('1')
    expect((await cache.get('c'))?.toString()).toBe('3')
    expect((await cache.get('d'))?.toString()).toBe('4')
  })

  it('replacing an entry makes it the most recent without growing the cache', async () => {
    const cache = new MemoryCache({ maxEntries: 2 })
    await cache.set('a', '1', 60)
    await cache.set('b', '2', 60)
    await cache.set('a', '1b', 60)
    await cache.set('c', '3', 60)
    expect(await cache.get('b')).toBeUndefined()
    expect((await cache.get('a'))?.toString()).toBe('1b')
    expect((await cache.get('c'))?.toString()).toBe('3')
  })

  it('expires exactly at the TTL on the injected clock', async () => {
    let now = 1_000_000
    const cache = new MemoryCache({ now: () => now })
    await cache.set('k', 'v', 2)
    now += 1_999
    expect((await cache.get('k'))?.toString()).toBe('v')
    now += 1
    expect(await cache.get('k')).toBeUndefined()
    expect(cache.size).toBe(0) // the expired entry was dropped when touched
  })

  it('rejects a maxEntries that is not a positive integer', () => {
    for (const maxEntries of [0, -1, 1.5, Number.NaN]) {
      expect(() => new MemoryCache({ maxEntries })).toThrow(RangeError)
    }
  })

  it('createCache picks the backend named in the options', async () => {
    const cache = createCache({ backend: 'memory', maxEntries: 5 })
    expect(cache).toBeInstanceOf(MemoryCache)
    expect(cache.backend).toBe('memory')
    await cache.close()
  })
})
