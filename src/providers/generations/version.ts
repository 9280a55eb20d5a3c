/**
 * An index kind's version as the generation stores hand it out (`NamespaceGenerations.versions`, the writes channel)
 * and the shared catalog reads it back: `<epoch>:<generation>`, the store's epoch (random, new whenever the store
 * lost its state; hex, so without `:`) and the generation of the kind's last recorded write (0 before any). Two
 * versions of one epoch are ordered by their generations; versions of two epochs are only different.
 *
 * A knowledge-graph store's `version()` is another thing: an opaque token of one store's graph (its own epoch and
 * counter, or a word for an empty graph) that callers compare for equality and never parse.
 *
 * The Redis store's write script builds the same string in Lua for the writes channel (src/providers/generations/redis.ts).
 */
import type { CatalogPosition } from './port.js'

export function formatVersion(epoch: string, generation: number): string {
  if (epoch === '') throw new RangeError('a version needs an epoch')
  if (!Number.isSafeInteger(generation) || generation < 0) throw new RangeError(`generation ${generation} is not a whole number from 0`)
  return `${epoch}:${generation}`
}

/**
 * The epoch and generation a version names; undefined for a string that is not a version. The generation is what
 * follows the last `:`, so an epoch holding `:` (none does today) would still be read whole.
 */
export function parseVersion(version: string): CatalogPosition | undefined {
  const colon = version.lastIndexOf(':')
  const epoch = version.slice(0, colon)
  const digits = version.slice(colon + 1)
  if (colon <= 0 || !/^\d+$/.test(digits)) return undefined
  const generation = Number(digits)
  return Number.isSafeInteger(generation) ? { epoch, generation } : undefined
}
