/**
 * A knowledge-graph log's records split by item, for the fold a block at a time (`streaming-fold.ts`): the records
 * as they concern each item alone, handed out in the snapshot's id order. A log larger than a fold may hold parsed is
 * split by range of item ids: one pass to cut the ranges, one that writes each record's share of each range to a file
 * beside the snapshot (`SpillFile`), then each range read back alone, so that both the heap and the parsing stay in
 * proportion to the log, not to its square.
 */
import type { CompactGraph } from './compact-graph.js'
import type { KgRecord } from './embedded.js'
import { SpillFile } from './spill-file.js'

export type Kind = 'entities' | 'relations'
export type Row = CompactGraph['entities'][number] | CompactGraph['relations'][number]

/** Which items a `LogShares` holds the shares of. */
type Holds = (kind: Kind, id: string) => boolean
const parse = (record: Buffer) => JSON.parse(record.toString('utf8')) as KgRecord

/**
 * `LogShares` a range of item ids at a time, in id order (entities, then relations), so that at most about `shareBytes`
 * of the log's records are held parsed: the ranges are cut from a first pass over the log (each record's bytes shared
 * among the items it names); a second writes each record's share of each range to `spillFile` (`splitByRange`), and a
 * range's `LogShares` is built from its own shares when the rows reach it. A log within `shareBytes` is one range, read
 * once, and nothing is written.
 */
export class RangedShares {
  /** Per kind, the first id of each range after the first (ranges are `[bounds[i - 1], bounds[i])`). */
  private readonly bounds: Record<Kind, string[]> | undefined
  private readonly spill: SpillFile | undefined
  private readonly at: Record<Kind, number> = { entities: 0, relations: 0 }
  private held: { kind: Kind | undefined; range: number; shares: LogShares } | undefined

  constructor(private readonly records: Iterable<Buffer>, logBytes: number, shareBytes: number, spillFile: string) {
    if (logBytes <= shareBytes) return
    this.bounds = rangeBounds(records, shareBytes)
    this.spill = spillShares(records, this.bounds, spillFile)
  }

  of(kind: Kind, id: string, row: Row | undefined): KgRecord[] | undefined {
    if (this.bounds && rangeIn(this.bounds[kind], id) !== this.at[kind]) throw new RangeError(`the ${kind} ${id} is out of id order`)
    return this.shares(kind).of(kind, id, row)
  }

  nextNew(kind: Kind, before?: string): string | undefined {
    const last = !this.bounds ? 0 : before === undefined ? this.bounds[kind].length : rangeIn(this.bounds[kind], before)
    for (;;) {
      const id = this.shares(kind).nextNew(kind, before)
      if (id !== undefined || this.at[kind] >= last) return id
      this.at[kind]++
    }
  }

  /** Removes the spilled shares. */
  close(): void {
    this.spill?.remove()
  }

  private shares(kind: Kind): LogShares {
    const { bounds, spill } = this
    if (!bounds || !spill) return (this.held ??= { kind: undefined, range: 0, shares: new LogShares(numbered(this.records), () => true) }).shares
    const range = this.at[kind]
    if (this.held?.kind === kind && this.held.range === range) return this.held.shares
    const from = bounds[kind][range - 1]
    const to = bounds[kind][range]
    // the range's shares replace the last range's, which the fold is done with
    this.held = undefined
    const holds: Holds = (k, id) => k === kind && (from === undefined || id >= from) && (to === undefined || id < to)
    this.held = { kind, range, shares: new LogShares(parsedEntries(spill.read(listOf(bounds, kind, range))), holds) }
    return this.held.shares
  }
}

/** The range of `bounds` (`RangedShares`) that holds `id`. */
function rangeIn(bounds: string[], id: string): number {
  let low = 0
  let high = bounds.length
  while (low < high) {
    const middle = (low + high) >> 1
    if (bounds[middle]! <= id) low = middle + 1
    else high = middle
  }
  return low
}

/** A range's list in the spill file: the entities' ranges first, then the relations'. */
function listOf(bounds: Record<Kind, string[]>, kind: Kind, range: number): number {
  return kind === 'entities' ? range : bounds.entities.length + 1 + range
}

function* numbered(records: Iterable<Buffer>): Generator<[number, KgRecord]> {
  let at = 0
  for (const record of records) yield [at++, parse(record)]
}

function* parsedEntries(entries: Iterable<[number, Buffer]>): Generator<[number, KgRecord]> {
  for (const [at, bytes] of entries) yield [at, parse(bytes)]
}

/** Every record's share of each range (`splitByRange`), numbered by the record's place in the log, in `file`. */
function spillShares(records: Iterable<Buffer>, bounds: Record<Kind, string[]>, file: string): SpillFile {
  const relationLists = Array.from({ length: bounds.relations.length + 1 }, (_, range) => listOf(bounds, 'relations', range))
  const spill = new SpillFile(file, listOf(bounds, 'relations', bounds.relations.length) + 1)
  try {
    let at = 0
    for (const record of records) {
      const lists = splitByRange(parse(record), (kind, id) => listOf(bounds, kind, rangeIn(bounds[kind], id)), relationLists)
      for (const [list, share] of lists) spill.add(list, at, JSON.stringify(share))
      at++
    }
    spill.finish()
  } catch (error) {
    spill.remove()
    throw error
  }
  return spill
}

/**
 * One record as it concerns each range (`listOf` names a range's list): the items of the range alone, in the record's
 * order. A delete, and the entities a record removes, go to every range of relations too: `LogShares` finds the
 * relations they remove by their ends (the same removals `LogShares` holds for every entity).
 */
function splitByRange(change: KgRecord, listOf: (kind: Kind, id: string) => number, relationLists: number[]): Map<number, KgRecord> {
  const out = new Map<number, KgRecord>()
  if (change.op === 'delete') {
    out.set(listOf('entities', change.id), change)
    for (const list of relationLists) out.set(list, change)
    return out
  }
  const share = (list: number) => {
    let held = out.get(list)
    if (!held) out.set(list, (held = emptyLike(change)))
    return held as typeof change
  }
  if (change.op === 'derive' || change.op === 'derive-parts') {
    for (const id of change.removeRelations) (share(listOf('relations', id)) as typeof change).removeRelations.push(id)
    for (const id of change.removeEntities) (share(listOf('entities', id)) as typeof change).removeEntities.push(id)
    if (change.removeEntities.length > 0) for (const list of relationLists) (share(list) as typeof change).removeEntities.push(...change.removeEntities)
  }
  if (change.op === 'derive-parts') {
    for (const entry of change.parts.entities) (share(listOf('entities', entry.id)) as typeof change).parts.entities.push(entry)
    for (const entry of change.parts.relations) (share(listOf('relations', entry.id)) as typeof change).parts.relations.push(entry)
    return out
  }
  for (const entity of change.entities) (share(listOf('entities', entity.id)) as typeof change).entities.push(entity)
  for (const relation of change.relations) (share(listOf('relations', relation.id)) as typeof change).relations.push(relation)
  return out
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

  constructor(records: Iterable<[number, KgRecord]>, private readonly holds: Holds) {
    for (const [at, change] of records) this.split(change, at)
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
