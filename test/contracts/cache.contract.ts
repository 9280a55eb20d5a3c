import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Cache } from '../../src/providers/cache/port.js'

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The promises of the `Cache` port, one `it` each, run against every implementation.
 * `make` returns a fresh cache whose keys no other test sees (a new instance or a new prefix).
 */
export function describeCacheContract(name: string, make: () => Promise<Cache>): void {
  describe(`Cache contract: ${name}`, () => {
    let cache: Cache

    beforeEach(async () => {
      cache = await make()
    })

    afterEach(async () => {
      await cache.close()
    })

    it('get of a key never stored is undefined', async () => {
      expect(await cache.get('never-stored')).toBeUndefined()
    })

    it('get returns exactly the string set, for empty, Unicode and large values', async () => {
      const large = '检索'.repeat(100_000) + 'x'
      const values = ['', 'plain', '咳嗽三周以上要做什么检查 🩺 "quoted"\n\ttab', large, 'r1:0000000000000000:looks-like-an-envelope']
      for (const [index, value] of values.entries()) {
        await cache.set(`value-${index}`, value, 60)
      }
      for (const [index, value] of values.entries()) {
        expect((await cache.get(`value-${index}`))?.toString()).toBe(value)
      }
    })

    it('get returns exactly the bytes set, including bytes that are not UTF-8, and a view only its own bytes', async () => {
      const binary = Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x0a, 0x72, 0x31, 0x3a])
      const backing = new Uint8Array([9, 9, 1, 2, 3, 9, 9])
      await cache.set('binary', binary, 60)
      await cache.set('view', backing.subarray(2, 5), 60)
      expect((await cache.get('binary'))?.toString('hex')).toBe('00fffe800a72313a')
      expect((await cache.get('view'))?.toString('hex')).toBe('010203')
    })

    it('set replaces the earlier value under the same key', async () => {
      await cache.set('k', 'first', 60)
      await cache.set('k', 'second', 60)
      expect((await cache.get('k'))?.toString()).toBe('second')
    })

    it('keys are independent of one another', async () => {
      await cache.set('a', 'A', 60)
      await cache.set('b', 'B', 60)
      expect((await cache.get('a'))?.toString()).toBe('A')
      expect((await cache.get('b'))?.toString()).toBe('B')
      expect(await cache.get('c')).toBeUndefined()
    })

    it('an entry is gone once its TTL has passed, and present before', async () => {
      await cache.set('short', 'v', 0.3)
      await cache.set('long', 'v', 60)
      expect((await cache.get('short'))?.toString()).toBe('v')
      await sleep(450)
      expect(await cache.get('short')).toBeUndefined()
      expect((await cache.get('long'))?.toString()).toBe('v')
    })

    it('set with a TTL that is not positive and finite stores nothing', async () => {
      for (const [index, ttl] of [0, -5, Number.NaN, Number.POSITIVE_INFINITY].entries()) {
        await cache.set(`bad-ttl-${index}`, 'v', ttl)
        expect(await cache.get(`bad-ttl-${index}`)).toBeUndefined()
      }
    })

    it('set refreshes the TTL of a replaced entry', async () => {
      await cache.set('refresh', 'old', 0.3)
      await cache.set('refresh', 'new', 60)
      await sleep(450)
      expect((await cache.get('refresh'))?.toString()).toBe('new')
    })

    it('health is ok exactly while the cache serves: ok with a latency while a set value comes back, not ok once closed', async () => {
      const open = await cache.health()
      expect(open.ok).toBe(true)
      expect(open.backend).toBe(`cache:${cache.backend}`)
      expect(open.latency_ms).toBeGreaterThanOrEqual(0)
      expect(open.latency_ms).toBeLessThan(1_000)
      await cache.set('health-round-trip', 'v', 60)
      expect((await cache.get('health-round-trip'))?.toString()).toBe('v')
      await cache.close()
      // Closed, get misses: health must say so rather than report the cache as serving.
      expect(await cache.get('health-round-trip')).toBeUndefined()
      const closed = await cache.health()
      expect(closed.ok).toBe(false)
      expect(closed.backend).toBe(`cache:${cache.backend}`)
      expect(closed.detail).toMatch(/closed/)
    })

    it('after close, get misses and set does nothing, without throwing', async () => {
      await cache.set('before-close', 'v', 60)
      await cache.close()
      await expect(cache.set('after-close', 'v', 60)).resolves.toBeUndefined()
      await expect(cache.get('before-close')).resolves.toBeUndefined()
      await expect(cache.get('after-close')).resolves.toBeUndefined()
      await expect(cache.close()).resolves.toBeUndefined()
    })
  })
}
