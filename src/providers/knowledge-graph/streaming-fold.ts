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
 * they are parsed; a log larger than `shareBytes` is gone over once more per range of item ids, holding that range's
 * shares alone (`RangedShares`), so that what a fold holds does not grow with the log a large namespace's fold is given.
 *
 * A format-1 snapshot (whole items as JSON, in no promised order) is folded whole, once: what it writes is format 2.
 */
import { closeSync, openSync, readSync, rmSync, writeSync } from 'node:fs'
import { recordBytes } from '../embedded/log-file-records.js'
import { BLOCK_BYTES, payloadBlocks, type SnapshotFileWriter, type SnapshotHead } from '../embedded/snapshot-stream.js'
import { compactParts } from './compact-stream.js'
import type { CompactEntity, CompactGraph, CompactRelation } from './compact-graph.js'
import { numberingTables, type CompactStrings, type CompactTables } from './derived-items.js'
import { compactEntityRow, compactRelationRow, FOLD_SHARE_BYTES, foldKnowledgeGraph, KgPartition, restoreEntity, restoreRelation, type KgRecord } from './embedded.js'

const MAGIC = Buffer.from([0, 0x4b, 0x47, 0x32])

type Row = CompactGraph['entities'][number] | CompactGraph['relations'][number]
const rowId = (row: Row): string => (Array.isArray(row) ? row[0] : row.id)

/**
 * `inBlocks`: `'smaller-log'` (the fold thread's) reads the snapshot in blocks when the log holds fewer bytes than it, and
 * folds the two whole otherwise (the log's items are then most of the namespace, held either way, and the whole fold is
 * the faster; `foldLogBytes` keeps such a log small); `'always'` reads in blocks whenever the snapshot is compact.
 * `records`: gone over more than once when the log holds more than `shareBytes`.
 */
export function foldKnowledgeGraphInBlocks(
  snapshot: SnapshotHead | undefined, records: Iterable<Buffer>, out: SnapshotFileWriter, backend: string,
  { blockBytes = BLOCK_BYTES, inBlocks = 'smaller-log', shareBytes = FOLD_SHARE_BYTES }:
  { blockBytes?: number; inBlocks?: 'smaller-log' | 'always'; shareBytes?: number } = {}
): void {
  const logBytes = recordBytes(records)
  if (!snapshot || (inBlocks === 'smaller-log' && logBytes >= snapshot.payloadBytes) || !isCompact(snapshot, backend)) {
    const payload = snapshot ? Buffer.concat([...payloadBlocks(snapshot, backend, blockBytes)]) : undefined
    out.write(foldKnowledgeGraph(payload, [...records]))
    return
  }
  const shares = new RangedShares(records, logBytes, shareBytes)
  let strings: CompactStrings = { docs: [], types: [] }
  const { tables, docs, types } = numberingTables()
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
  }
}

type Kind = 'entities' | 'relations'

/** Which items a `LogShares` holds the shares of. */
type Holds = (kind: Kind, id: string) => boolean
const parse = (record: Buffer) => JSON.parse(record.toString('utf8')) as KgRecord

/**
 * `LogShares` a range of item ids at a time, in id order (entities, then relations), so that at most about `shareBytes`
 * of the log's records are held parsed: the ranges are cut from a first pass over the log (each record's bytes shared
 * among the items it names), and each range's shares built by another pass when the rows reach it. A log within
 * `shareBytes` is one range, read once.
 */
class RangedShares {
  /** Per kind, the first id of each range after the first (ranges are `[bounds[i - 1], bounds[i])`). */
  private readonly bounds: Record<Kind, string[]> | undefined
  private readonly at: Record<Kind, number> = { entities: 0, relations: 0 }
  private held: { kind: Kind | undefined; range: number; shares: LogShares } | undefined

  constructor(private readonly records: Iterable<Buffer>, logBytes: number, shareBytes: number) {
    this.bounds = logBytes <= shareBytes ? undefined : rangeBounds(records, shareBytes)
  }

  of(kind: Kind, id: string, row: Row | undefined): KgRecord[] | undefined {
    if (this.bounds && this.rangeOf(kind, id) !== this.at[kind]) throw new RangeError(`the ${kind} ${id} is out of id order`)
    return this.shares(kind).of(kind, id, row)
  }

  nextNew(kind: Kind, before?: string): string | undefined {
    const last = !this.bounds ? 0 : before === undefined ? this.bounds[kind].length : this.rangeOf(kind, before)
    for (;;) {
      const id = this.shares(kind).nextNew(kind, before)
      if (id !== undefined || this.at[kind] >= last) return id
      this.at[kind]++
    }
  }

  private rangeOf(kind: Kind, id: string): number {
    const bounds = this.bounds![kind]
    let low = 0
    let high = bounds.length
    while (low < high) {
      const middle = (low + high) >> 1
      if (bounds[middle]! <= id) low = middle + 1
      else high = middle
    }
    return low
  }

  private shares(kind: Kind): LogShares {
    const bounds = this.bounds
    if (!bounds) return (this.held ??= { kind: undefined, range: 0, shares: new LogShares(this.records, () => true) }).shares
    const range = this.at[kind]
    if (this.held?.kind === kind && this.held.range === range) return this.held.shares
    const from = bounds[kind][range - 1]
    const to = bounds[kind][range]
    // the range's shares replace the last range's, which the fold is done with
    this.held = undefined
    const holds: Holds = (k, id) => k === kind && (from === undefined || id >= from) && (to === undefined || id < to)
    this.held = { kind, range, shares: new LogShares(this.records, holds) }
    return this.held.shares
  }
}

/** The ids that begin each range of about `shareBytes` of the log, by kind: a record's bytes shared evenly among the items it names. */
function rangeBounds(records: Iterable<Buffer>, shareBytes: number): Record<Kind, string[]> {
  const weights = { entities: new Map<string, number>(), relations: new Map<string, number>() }
  for (const record of records) {
    const named = itemsNamed(parse(record))
    const each = record.length / Math.max(1, named.length)
    for (const [kind, id] of named) weights[kind].set(id, (weights[kind].get(id) ?? 0) + each)
  }
  const cut = (weight: Map<string, number>) => {
    const bounds: string[] = []
    let sum = 0
    for (const id of [...weight.keys()].sort()) {
      const w = weight.get(id)!
      if (sum > 0 && sum + w > shareBytes) {
        bounds.push(id)
        sum = 0
      }
      sum += w
    }
    return bounds
  }
  return { entities: cut(weights.entities), relations: cut(weights.relations) }
}

/** The items a record names, as `LogShares` gives them shares (an item once per mention). */
function itemsNamed(change: KgRecord): Array<[Kind, string]> {
  if (change.op === 'delete') return [['entities', change.id]]
  const named: Array<[Kind, string]> = []
  if (change.op !== 'put') {
    for (const id of change.removeRelations) named.push(['relations', id])
    for (const id of change.removeEntities) named.push(['entities', id])
  }
  const { entities, relations } = change.op === 'derive-parts' ? change.parts : change
  for (const entity of entities) named.push(['entities', entity.id])
  for (const relation of relations) named.push(['relations', relation.id])
  return named
}

/**
 * The log's records split by item: for each entity and relation they name (of those `holds` says), the records as they
 * concern that item alone (in log order), so that applying them to a partition holding that item alone leaves it as
 * applying the whole log to the whole namespace does. A record removing an entity concerns the relations ending at it
 * too (they go with it), found by the relation's ends when its row is read: those removals are held for every entity.
 */
class LogShares {
  private readonly items = { entities: new Map<string, Map<number, KgRecord>>(), relations: new Map<string, Map<number, KgRecord>>() }
  /** Entity id -> the records (by index) that remove it, as those records concern a relation ending at it. */
  private readonly removals = new Map<string, Map<number, KgRecord>>()
  /** Relation id -> the ends its puts in the log give it. */
  private readonly putEnds = new Map<string, string[]>()
  private readonly fresh: Record<Kind, string[]>
  private readonly nextFresh = { entities: 0, relations: 0 }

  constructor(records: Iterable<Buffer>, private readonly holds: Holds) {
    let at = 0
    for (const record of records) this.split(parse(record), at++)
    this.fresh = { entities: [...this.items.entities.keys()].sort(), relations: [...this.items.relations.keys()].sort() }
  }

  /** The records concerning item `id` (whose snapshot row is `row`, if any), in log order; undefined when none does. */
  of(kind: Kind, id: string, row: Row | undefined): KgRecord[] | undefined {
    const own = this.items[kind].get(id)
    if (kind === 'entities' || this.removals.size === 0) return own ? [...own.values()] : undefined
    const ends = new Set([...(row ? endsOf(row as CompactGraph['relations'][number]) : []), ...(this.putEnds.get(id) ?? [])])
    const byRecord = new Map(own)
    for (const end of ends) {
      for (const [at, change] of this.removals.get(end) ?? []) {
        const held = byRecord.get(at)
        byRecord.set(at, held ? merged(held, change) : change)
      }
    }
    if (byRecord.size === 0) return undefined
    return [...byRecord].sort(([a], [b]) => a - b).map(([, change]) => change)
  }

  /** The next id in id order below `before` (or any) that the log names and the snapshot may not hold, consumed. */
  nextNew(kind: Kind, before?: string): string | undefined {
    const ids = this.fresh[kind]
    const at = this.nextFresh[kind]
    if (at >= ids.length || (before !== undefined && ids[at]! >= before)) {
      // an id the snapshot holds is passed over here: its row comes next and is emitted with it
      if (before !== undefined && ids[at] === before) this.nextFresh[kind]++
      return undefined
    }
    this.nextFresh[kind]++
    return ids[at]
  }

  private split(change: KgRecord, at: number): void {
    const share = (kind: Kind, id: string): KgRecord | undefined => {
      if (!this.holds(kind, id)) return undefined
      let held = this.items[kind].get(id)
      if (!held) this.items[kind].set(id, (held = new Map()))
      let record = held.get(at)
      if (!record) held.set(at, (record = emptyLike(change)))
      return record
    }
    const removal = (id: string, record: KgRecord) => {
      let held = this.removals.get(id)
      if (!held) this.removals.set(id, (held = new Map()))
      held.set(at, held.has(at) ? merged(held.get(at)!, record) : record)
    }
    if (change.op === 'delete') {
      share('entities', change.id)
      removal(change.id, change)
      return
    }
    if (change.op === 'derive' || change.op === 'derive-parts') {
      for (const id of change.removeRelations) (share('relations', id) as typeof change | undefined)?.removeRelations.push(id)
      for (const id of change.removeEntities) {
        ;(share('entities', id) as typeof change | undefined)?.removeEntities.push(id)
        const alone = emptyLike(change) as typeof change
        alone.removeEntities.push(id)
        removal(id, alone)
      }
    }
    if (change.op === 'derive-parts') {
      for (const entry of change.parts.entities) (share('entities', entry.id) as typeof change | undefined)?.parts.entities.push(entry)
      for (const entry of change.parts.relations) {
        const held = share('relations', entry.id) as typeof change | undefined
        if (!held) continue
        held.parts.relations.push(entry)
        this.notePutEnds(entry.id, entry.source, entry.target)
      }
      return
    }
    for (const entity of change.entities) (share('entities', entity.id) as typeof change | undefined)?.entities.push(entity)
    for (const relation of change.relations) {
      const held = share('relations', relation.id) as typeof change | undefined
      if (!held) continue
      held.relations.push(relation)
      this.notePutEnds(relation.id, relation.source, relation.target)
    }
  }

  private notePutEnds(id: string, source: string, target: string): void {
    const ends = this.putEnds.get(id)
    if (ends) ends.push(source, target)
    else this.putEnds.set(id, [source, target])
  }
}

/** A record of the same kind concerning nothing yet (a delete is concerned whole or not at all). */
function emptyLike(change: KgRecord): KgRecord {
  switch (change.op) {
    case 'delete': return change
    case 'put': return { op: 'put', entities: [], relations: [] }
    case 'derive': return { op: 'derive', entities: [], relations: [], removeEntities: [], removeRelations: [] }
    case 'derive-parts': return { op: 'derive-parts', parts: { docs: change.parts.docs, entities: [], relations: [] }, removeEntities: [], removeRelations: [] }
  }
}

/** Two shares of one record as one (a relation's own and the removal of an entity it ends at). */
function merged(a: KgRecord, b: KgRecord): KgRecord {
  if (a.op === 'delete' || b.op === 'delete') return a.op === 'delete' ? a : b
  if (a.op === 'put' || b.op === 'put') {
    if (a.op !== 'put' || b.op !== 'put') throw new RangeError('one record, two kinds')
    return { op: 'put', entities: [...a.entities, ...b.entities], relations: [...a.relations, ...b.relations] }
  }
  const removeEntities = [...new Set([...a.removeEntities, ...b.removeEntities])]
  const removeRelations = [...new Set([...a.removeRelations, ...b.removeRelations])]
  if (a.op === 'derive-parts' && b.op === 'derive-parts') {
    return { op: 'derive-parts', parts: { docs: a.parts.docs, entities: [...a.parts.entities, ...b.parts.entities], relations: [...a.parts.relations, ...b.parts.relations] }, removeEntities, removeRelations }
  }
  if (a.op === 'derive' && b.op === 'derive') {
    return { op: 'derive', entities: [...a.entities, ...b.entities], relations: [...a.relations, ...b.relations], removeEntities, removeRelations }
  }
  throw new RangeError('one record, two kinds')
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
