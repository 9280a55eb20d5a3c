/**
 * The knowledge graph's fold with a snapshot read and written a block at a time (`snapshot-stream.ts`), so that a fold
 * holds the log's changes and the items they touch, not the namespace: the bytes are those `foldKnowledgeGraph` writes
 * for the same files, made by the same row encoders.
 *
 * The rows are read in their id order and written out as they come: an untouched row restored and encoded again (its
 * documents and types numbered anew, as a whole fold numbers them), a touched one with the log's records applied to it
 * alone (or not at all, when they remove it), new items between them in id order. The rows go to a file beside the
 * snapshot, since the tables they number are written before them; the tables then, the rows copied after them.
 *
 * The records are held parsed and split by item (`LogShares`), about 2.5 bytes of heap a byte of log and more while
 * they are parsed; a log larger than `shareBytes` is split by range of item ids into a file beside the snapshot, and
 * each range's shares held alone (`RangedShares`), so that what a fold holds does not grow with the log a large
 * namespace's fold is given, nor its parsing with the square of that log.
 *
 * A format-1 snapshot (whole items as JSON, in no promised order) is folded whole, once: what it writes is format 2.
 */
import { closeSync, openSync, readSync, rmSync, writeSync } from 'node:fs'
import { foldsWhole } from '../embedded/fold-client.js'
import { recordBytes } from '../embedded/log-file-records.js'
import { BLOCK_BYTES, payloadBlocks, type SnapshotFileWriter, type SnapshotHead } from '../embedded/snapshot-stream.js'
import { compactParts } from './compact-stream.js'
import type { CompactEntity, CompactGraph, CompactRelation } from './compact-graph.js'
import { numberingTables, type CompactStrings, type CompactTables } from './derived-items.js'
import { compactEntityRow, compactRelationRow, FOLD_SHARE_BYTES, FOLD_WHOLE_MAX_BYTES, foldKnowledgeGraph, KgPartition, restoreEntity, restoreRelation } from './embedded.js'
import { RangedShares, type Kind, type Row } from './log-shares.js'

const MAGIC = Buffer.from([0, 0x4b, 0x47, 0x32])

const rowId = (row: Row): string => (Array.isArray(row) ? row[0] : row.id)

/**
 * `inBlocks`: `'smaller-log'` (the fold thread's) reads the snapshot in blocks unless the log holds more bytes than it
 * and the two are small (`foldsWhole` within `FOLD_WHOLE_MAX_BYTES`: the log's items are then most of the namespace,
 * and the whole fold is the faster); `'always'` reads in blocks whenever the snapshot is compact. `records`: gone over
 * twice when the log holds more than `shareBytes` (`RangedShares`).
 */
export function foldKnowledgeGraphInBlocks(
  snapshot: SnapshotHead | undefined, records: Iterable<Buffer>, out: SnapshotFileWriter, backend: string,
  { blockBytes = BLOCK_BYTES, inBlocks = 'smaller-log', shareBytes = FOLD_SHARE_BYTES }:
  { blockBytes?: number; inBlocks?: 'smaller-log' | 'always'; shareBytes?: number } = {}
): void {
  const logBytes = recordBytes(records)
  const whole = inBlocks === 'smaller-log' && snapshot && foldsWhole({ snapshotBytes: snapshot.payloadBytes, logBytes }, FOLD_WHOLE_MAX_BYTES)
  if (!snapshot || whole || !isCompact(snapshot, backend)) {
    const payload = snapshot ? Buffer.concat([...payloadBlocks(snapshot, backend, blockBytes)]) : undefined
    out.write(foldKnowledgeGraph(payload, [...records]))
    return
  }
  let strings: CompactStrings = { docs: [], types: [] }
  const { tables, docs, types } = numberingTables()
  const shares = new RangedShares(records, logBytes, shareBytes, `${out.file}.shares`)
  const rowsOut = new RowsFile(`${out.file}.rows`)
  try {
    /** The item `id` as the log leaves it, from its row (none when the snapshot has none), written unless it is gone. */
    const emit = (kind: Kind, id: string, row: Row | undefined) => {
      const changes = shares.of(kind, id, row)
      if (!changes) {
        rowsOut.row(rewritten(row!, kind, strings, tables))
        return
      }
      const item = KgPartition.ofRow(kind, row, strings)
      for (const change of changes) item.apply(change)
      if (kind === 'entities' ? item.entities.has(id) : item.relations.has(id)) rowsOut.row(kind === 'entities' ? item.entityRow(id, tables) : item.relationRow(id, tables))
    }
    let section: Kind | undefined
    /** Items only the log holds, in id order before `before` (all that are left without it). */
    const emitNew = (kind: Kind, before?: string) => {
      for (let id = shares.nextNew(kind, before); id !== undefined; id = shares.nextNew(kind, before)) emit(kind, id, undefined)
    }
    const enter = (kind: Kind) => {
      if (section === kind) return
      if (section === undefined) {
        rowsOut.open('entities')
        section = 'entities'
        if (kind === 'entities') return
      }
      emitNew('entities')
      rowsOut.open('relations')
      section = 'relations'
    }
    for (const part of compactParts(payloadBlocks(snapshot, backend, blockBytes))) {
      if ('table' in part) {
        strings = { ...strings, [part.table]: part.values }
        continue
      }
      enter(part.row)
      const id = rowId(part.value)
      emitNew(part.row, id)
      emit(part.row, id, part.value)
    }
    enter('relations')
    emitNew('relations')
    rowsOut.close()
    out.write(Buffer.concat([MAGIC, Buffer.from(`{"docs":${JSON.stringify(docs())},"types":${JSON.stringify(types())},"entities":`, 'utf8')]))
    rowsOut.copyTo(out)
    out.write(Buffer.from('}', 'utf8'))
  } finally {
    rowsOut.remove()
    shares.close()
  }
}


/** An untouched row as a whole fold writes it again: restored as `fromCompact` holds it, encoded with the new tables. */
function rewritten(row: Row, kind: 'entities' | 'relations', strings: CompactStrings, tables: CompactTables): Row {
  if (!Array.isArray(row)) return row
  return kind === 'entities'
    ? compactEntityRow(restoreEntity(row as CompactEntity, strings), tables)
    : compactRelationRow(restoreRelation(row as CompactRelation, strings, (id) => id), tables)
}

function isCompact(snapshot: SnapshotHead, backend: string): boolean {
  const blocks = payloadBlocks(snapshot, backend, MAGIC.length)
  const first = blocks.next()
  blocks.return(undefined)
  return !first.done && first.value.equals(MAGIC)
}

/**
 * The rows of both arrays as the whole payload's JSON holds them (`[row,row],"relations":[row]`), written to a file
 * in blocks and copied into the snapshot after the tables.
 */
class RowsFile {
  private readonly fd: number
  private pending: string[] = []
  private pendingBytes = 0
  private written = 0
  private first = true
  private sections = 0

  constructor(private readonly file: string) {
    this.fd = openSync(file, 'w+')
  }

  open(kind: 'entities' | 'relations'): void {
    this.push(this.sections === 0 ? '[' : `],"${kind}":[`)
    this.sections++
    this.first = true
  }

  row(row: Row): void {
    this.push(this.first ? JSON.stringify(row) : `,${JSON.stringify(row)}`)
    this.first = false
  }

  close(): void {
    this.push(']')
    this.flush()
  }

  copyTo(out: SnapshotFileWriter): void {
    const block = Buffer.alloc(BLOCK_BYTES)
    for (let at = 0; at < this.written; ) {
      const read = readSync(this.fd, block, 0, Math.min(block.length, this.written - at), at)
      if (read === 0) throw new RangeError(`${this.file} ended early`)
      out.write(block.subarray(0, read))
      at += read
    }
  }

  remove(): void {
    closeSync(this.fd)
    rmSync(this.file, { force: true })
  }

  private push(text: string): void {
    this.pending.push(text)
    this.pendingBytes += text.length
    if (this.pendingBytes >= BLOCK_BYTES / 4) this.flush()
  }

  private flush(): void {
    const bytes = Buffer.from(this.pending.join(''), 'utf8')
    for (let done = 0; done < bytes.length; ) done += writeSync(this.fd, bytes, done, bytes.length - done, this.written + done)
    this.written += bytes.length
    this.pending = []
    this.pendingBytes = 0
  }
}
