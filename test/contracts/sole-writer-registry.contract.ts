import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { thisProcess, type SoleWriterRegistry } from '../../src/corpus/sole-writer/index.js'

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** One set of shared stores no other test sees: `open` gives a registry over it as another process would hold one. */
export interface RegistryStores {
  open(): SoleWriterRegistry
  drop(): Promise<void>
}

/** The lease every case uses, in ms: long enough for a claim round trip on a busy machine, short enough to wait out. */
const LEASE_MS = 1_500

/**
 * The promises of `SoleWriterRegistry`, one `it` each, run against every implementation. `make` returns fresh
 * stores (a new key or a new collection); each registry opened over them stands for one process.
 */
export function describeSoleWriterRegistryContract(name: string, make: () => Promise<RegistryStores>): void {
  describe(`SoleWriterRegistry contract: ${name}`, () => {
    let stores: RegistryStores
    beforeEach(async () => { stores = await make() })
    afterEach(async () => { await stores.drop() })

    it('registers the first instance that claims stores no one holds', async () => {
      expect(await stores.open().claim(thisProcess(), LEASE_MS)).toEqual({ held: true })
    })

    it('refuses a second instance while the first holds it, naming the holder and when its lease ends at the latest', async () => {
      const [a, b] = [thisProcess(), thisProcess()]
      await stores.open().claim(a, LEASE_MS)
      const claim = await stores.open().claim(b, LEASE_MS)
      expect(claim).toEqual({ held: false, holder: a, endsInMs: expect.any(Number) })
      const { endsInMs } = claim as { endsInMs: number }
      expect(endsInMs).toBeGreaterThan(0)
      expect(endsInMs).toBeLessThanOrEqual(LEASE_MS)
    })

    it('renews the holder\'s registration when it claims again: it outlasts its first lease', async () => {
      const [a, b] = [thisProcess(), thisProcess()]
      const holder = stores.open()
      await holder.claim(a, LEASE_MS)
      const until = performance.now() + 2 * LEASE_MS
      while (performance.now() < until) {
        await sleep(LEASE_MS / 3)
        expect(await holder.claim(a, LEASE_MS)).toEqual({ held: true })
      }
      expect(await stores.open().claim(b, LEASE_MS)).toMatchObject({ held: false, holder: a })
    })

    it('ends a registration that is not renewed once its lease ran out: then another instance holds it', async () => {
      const [a, b] = [thisProcess(), thisProcess()]
      const [first, second] = [stores.open(), stores.open()]
      await first.claim(a, LEASE_MS)
      await sleep(LEASE_MS + 200)
      expect(await second.claim(b, LEASE_MS)).toEqual({ held: true })
      expect(await first.claim(a, LEASE_MS)).toMatchObject({ held: false, holder: b })
    })

    it('ends the holder\'s registration at its release, and keeps it at another instance\'s', async () => {
      const [a, b, c] = [thisProcess(), thisProcess(), thisProcess()]
      const holder = stores.open()
      await holder.claim(a, LEASE_MS)
      await stores.open().release(b)
      expect(await stores.open().claim(c, LEASE_MS)).toMatchObject({ held: false, holder: a })
      await holder.release(a)
      expect(await stores.open().claim(c, LEASE_MS)).toEqual({ held: true })
    })

    it('answers held to exactly one of several instances claiming at once', async () => {
      const claimants = [thisProcess(), thisProcess(), thisProcess()]
      const claims = await Promise.all(claimants.map((self) => stores.open().claim(self, LEASE_MS)))
      const held = claims.flatMap((claim, i) => (claim.held ? [claimants[i]!] : []))
      expect(held).toHaveLength(1)
      for (const claim of claims) if (!claim.held) expect(claim.holder).toEqual(held[0])
    })

    it('keeps the registrations of different stores apart', async () => {
      const other = await make()
      try {
        expect(await stores.open().claim(thisProcess(), LEASE_MS)).toEqual({ held: true })
        expect(await other.open().claim(thisProcess(), LEASE_MS)).toEqual({ held: true })
      } finally {
        await other.drop()
      }
    })
  })
}
