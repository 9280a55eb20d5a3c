import type { Collection } from '../../src/providers/vector-store/matrix.js'
import type { SnapshotSource } from '../../src/providers/vector-store/snapshot-codec.js'

/** A partition as a snapshot source with other record ids (a snapshot our writer never makes: an id twice). */
export function withIds(c: Collection, ids: readonly string[]): SnapshotSource {
  return {
    dims: c.dims, seq: c.seq, rows: c.rows, payloads: c.payloads, pool: c.pool,
    ids: { length: ids.length, at: (i) => ids[i]!, slice: (from, to) => ids.slice(from, to) }
  }
}
