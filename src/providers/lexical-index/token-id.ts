/**
 * Sparse-vector indices of lexical tokens on Qdrant: MurmurHash3 x86_32 (seed 0) of the token's UTF-8 bytes,
 * an unsigned 32-bit integer as Qdrant's sparse indices are. docs/scale-out.md says how collisions are handled.
 */
export const TOKEN_ID_SCHEME = 'murmur3_32/seed0/utf8'

const C1 = 0xcc9e2d51
const C2 = 0x1b873593

/** MurmurHash3 x86_32 of `bytes` with `seed`, unsigned. */
export function murmur3x86_32(bytes: Uint8Array, seed = 0): number {
  let h = seed >>> 0
  const blocks = bytes.length & ~3
  for (let i = 0; i < blocks; i += 4) {
    let k = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24)
    k = Math.imul(k, C1)
    k = (k << 15) | (k >>> 17)
    k = Math.imul(k, C2)
    h ^= k
    h = (h << 13) | (h >>> 19)
    h = (Math.imul(h, 5) + 0xe6546b64) | 0
  }
  let k = 0
  switch (bytes.length & 3) {
    case 3: k ^= bytes[blocks + 2]! << 16 // falls through
    case 2: k ^= bytes[blocks + 1]! << 8 // falls through
    case 1:
      k ^= bytes[blocks]!
      k = Math.imul(k, C1)
      k = (k << 15) | (k >>> 17)
      k = Math.imul(k, C2)
      h ^= k
  }
  h ^= bytes.length
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

const encoder = new TextEncoder()

/** The sparse index of one token. */
export function tokenId(token: string): number {
  return murmur3x86_32(encoder.encode(token), 0)
}
