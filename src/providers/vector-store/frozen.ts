import type { HeldPayloads } from './held-payloads.js'
import type { Collection } from './matrix.js'
import type { FrozenIds } from './record-ids.js'
import type { SharedRows } from './shared-rows.js'
import type { SnapshotSource } from './snapshot-codec.js'

/**
 * A partition as it stood when its log was set aside for a compaction: its records' ids, payloads and pool rows, copied
 * (references, not vectors or texts), so that its snapshot can be written while writes change the partition. Its rows are
 * held, so that no write reuses one for another vector until {@link release}.
 */
export class FrozenPartition implements SnapshotSource {
  private constructor(
    readonly dims: number,
    readonly seq: number,
    readonly ids: FrozenIds,
    readonly rows: readonly number[],
    readonly payloads: HeldPayloads,
    readonly pool: SharedRows
  ) {}

  /** `openStored` opens the partition's snapshot file again, for the payloads still read from it. */
  static of(c: Collection, openStored: () => number): FrozenPartition {
    const payloads = c.payloads.frozen(openStored)
    const rows = c.rows.slice()
    for (const row of rows) c.pool.hold(row)
    return new FrozenPartition(c.dims, c.seq, c.ids.frozen(), rows, payloads, c.pool)
  }

  release(): void {
    for (const row of this.rows) this.pool.release(row)
    this.payloads.closeStored()
  }
}
