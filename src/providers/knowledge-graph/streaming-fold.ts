/**
 * The knowledge graph's fold with a snapshot read and written a block at a time (`snapshot-stream.ts`), so that a fold
 * holds the log's changes and the items they touch, not the namespace: the bytes are those `foldKnowledgeGraph` writes
 * for the same files, made by the same row encoders.
 *
 * 1. The snapshot's rows are read once for the items the records touch (their ids, and the relations of every entity a
 *    record removes, which go with it), held as a partition of those items alone, and the records applied to it.
 * 2. The rows are read again in their id order and written out as they come: an untouched row restored and encoded
 *    again (its documents and types numbered anew, as a whole fold numbers them), a touched one as the partition now
 *    holds it (or not at all), new items between them in id order. The rows go to a file beside the snapshot, since
 *    the tables they number are written before them; the tables then, the rows copied after them.
 *
 * A format-1 snapshot (whole items as JSON, in no promised order) is folded whole, once: what it writes is format 2.
 */
import { closeSync, openSync, readSync, rmSync, writeSync } from 'node:fs'
import { BLOCK_BYTES, payloadBlocks, type SnapshotFileWriter, type SnapshotHead } from '../embedded/snapshot-stream.js'
import { compactParts } from './compact-stream.js'
import type { CompactEntity, CompactGraph, CompactRelation } from './compact-graph.js'
import type { CompactStrings, CompactTables } from './derived-items.js'
import { compactEntityRow, compactRelationRow, foldKnowledgeGraph, KgPartition, restoreEntity, restoreRelation, type KgRecord } from './embedded.js'

const MAGIC = Buffer.from([0, 0x4b, 0x47, 0x32])

type Row = CompactGraph['entities'][number] | CompactGraph['relations'][number]
const rowId = (row: Row): string => (Array.isArray(row) ? row[0] : row.id)

export function foldKnowledgeGraphInBlocks(snapshot: SnapshotHead | undefined, records: Buffer[], out: SnapshotFileWriter, backend: string, blockBytes = BLOCK_BYTES): void {
  if (!snapshot || !isCompact(snapshot, backend)) {
    const whole = snapshot ? Buffer.concat([...payloadBlocks(snapshot, backend, blockBytes)]) : undefined
    out.write(foldKnowledgeGraph(whole, records))
    return
  }
  // each record parsed when it is read, and again when it is applied: the log is held as its bytes alone
  const change = (record: Buffer) => JSON.parse(record.toString('utf8')) as KgRecord
  const touched = touchedBy(records, change)
  const rows = () => compactParts(payloadBlocks(snapshot, backend, blockBytes))

  // 1. the touched items, as a partition of their own, with the records applied
  const held: CompactGraph = { docs: [], types: [], entities: [], relations: [] }
  const loaded = { entities: new Set<string>(), relations: new Set<string>() }
  for (const part of rows()) {
    if ('table' in part) {
      held[part.table] = part.values
      continue
    }
    const id = rowId(part.value)
    const ends = part.row === 'relations' ? endsOf(part.value as CompactGraph['relations'][number]) : []
    if (touched[part.row].has(id) || ends.some((end) => touched.removed.has(end))) {
      ;(held[part.row] as Row[]).push(part.value)
      loaded[part.row].add(id)
    }
  }
  const strings: CompactStrings = { docs: held.docs, types: held.types }
  const partition = KgPartition.fromCompact(held)
  for (const record of records) partition.apply(change(record))

  // 2. every row in id order, written as it comes
  const docs = new Map<string, number>()
  const types = new Map<string, number>()
  const indexIn = (table: Map<string, number>, value: string): number => {
    let index = table.get(value)
    if (index === undefined) table.set(value, (index = table.size))
    return index
  }
  const tables: CompactTables = { doc: (value) => indexIn(docs, value), type: (value) => indexIn(types, value) }
  const added = {
    entities: partition.entities.ids().filter((id) => !loaded.entities.has(id)).sort(),
    relations: partition.relations.ids().filter((id) => !loaded.relations.has(id)).sort()
  }
  const next = { entities: 0, relations: 0 }
  const rowsFile = `${out.file}.rows`
  const rowsOut = new RowsFile(rowsFile)
  try {
    let section: 'entities' | 'relations' | undefined
    const emitNew = (kind: 'entities' | 'relations', before?: string) => {
      const ids = added[kind]
      while (next[kind] < ids.length && (before === undefined || ids[next[kind]]! < before)) {
        const id = ids[next[kind]++]!
        rowsOut.row(kind === 'entities' ? partition.entityRow(id, tables) : partition.relationRow(id, tables))
      }
    }
    const enter = (kind: 'entities' | 'relations') => {
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
    for (const part of rows()) {
      if ('table' in part) continue
      enter(part.row)
      const id = rowId(part.value)
      emitNew(part.row, id)
      if (loaded[part.row].has(id)) {
        const kept = part.row === 'entities' ? partition.entities.has(id) : partition.relations.has(id)
        if (kept) rowsOut.row(part.row === 'entities' ? partition.entityRow(id, tables) : partition.relationRow(id, tables))
      } else {
        rowsOut.row(rewritten(part.value, part.row, strings, tables))
      }
    }
    enter('relations')
    emitNew('relations')
    rowsOut.close()
    out.write(Buffer.concat([MAGIC, Buffer.from(`{"docs":${JSON.stringify([...docs.keys()])},"types":${JSON.stringify([...types.keys()])},"entities":`, 'utf8')]))
    rowsOut.copyTo(out)
    out.write(Buffer.from('}', 'utf8'))
  } finally {
    rowsOut.remove()
  }
}

/** What the records change: entity and relation ids they name, and the entities they remove (whose relations go too). */
function touchedBy(records: readonly Buffer[], parse: (record: Buffer) => KgRecord) {
  const touched = { entities: new Set<string>(), relations: new Set<string>(), removed: new Set<string>() }
  for (const record of records) {
    const change = parse(record)
    if (change.op === 'delete') {
      touched.entities.add(change.id)
      touched.removed.add(change.id)
      continue
    }
    if (change.op === 'derive' || change.op === 'derive-parts') {
      for (const id of change.removeEntities) {
        touched.entities.add(id)
        touched.removed.add(id)
      }
      for (const id of change.removeRelations) touched.relations.add(id)
    }
    const puts = change.op === 'derive-parts' ? change.parts : change
    for (const { id } of puts.entities) touched.entities.add(id)
    for (const { id } of puts.relations) touched.relations.add(id)
  }
  return touched
}

function endsOf(row: CompactGraph['relations'][number]): string[] {
  return Array.isArray(row) ? [row[1], row[2]] : [row.source, row.target]
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
