/**
 * The embedded store's items by id: an imported entity or relation whole, a derived one as its parts by document. A
 * derived write changes the parts of the documents it wrote and nothing else; the whole item (`entityOf`,
 * `relationOf` of every part) is built when it is read. So a write's cost does not grow with the documents citing an
 * item (docs/derivation.md, "Cost").
 *
 * Memory (issue 44): a namespace holds about three derived items and thirty parts per chunk, so a part is not an
 * object (`KgDerivation`, with its own list and strings) but a few slots of its item's one array: its chunk ids as a
 * bit mask of their indices in the document (`<doc_id>#<index>`) when they have that form, its document id and type the
 * partition's one string of each. A built item is held weakly: a later read finds it while something else holds it,
 * and a collection may take it.
 */
import { entityOf, relationOf } from './derived.js'
import { capacityOf, PartStore, type PartColumns } from './part-columns.js'
import { deriveRelationId, type KgDerivation, type KgEntity, type KgRelation } from './port.js'

type Field = 'name' | 'type' | 'description'

/**
 * Chunk ids by their indices in the part's document: a bit mask (bit i: `<doc>#<i>`) when they are ascending and each
 * below `MASK_BITS`, else the indices; as given when one is not `<doc>#<index>`.
 */
type Chunks = number | readonly number[] | readonly string[]

/** Bits of a chunk mask: it stays a small integer, which an array holds without a box. */
const MASK_BITS = 30

/** A part's cells (`PartColumns`): the document's number with flags, the count, the chunk mask; an entity's type. */
const DOC = 0
const COUNT = 1
const CHUNKS = 2
const TYPE = 3
/** Flags in a part's `DOC` cell, below the document's number. */
const LLM = 1
const NAMED = 2
const ODD = 4
const FLAG_BITS = 3
/** Slots of an `ODD` part in `extra`: name, description, chunks, count. */
const EXTRA = 4
/** Slots of a part in a compact snapshot row: document, count, chunks, llm (and an entity's name, type, description). */
const RELATION_SLOTS = 4
const ENTITY_SLOTS = 7
/** Parts an item finds a document's part among by a scan of their numbers; past this, by a binary search of their ids. */
const SCAN_UP_TO = 8

/** How a compact snapshot (`compact-graph.ts`) writes the strings parts repeat: an index into its tables of each. */
export interface CompactTables {
  doc(value: string): number
  type(value: string): number
}

/** Tables that number each document and type as first asked for, with the strings in their numbers' order. */
export function numberingTables(): { tables: CompactTables; docs(): string[]; types(): string[] } {
  const docs = new Map<string, number>()
  const types = new Map<string, number>()
  const indexIn = (table: Map<string, number>, value: string): number => {
    let index = table.get(value)
    if (index === undefined) table.set(value, (index = table.size))
    return index
  }
  return {
    tables: { doc: (value) => indexIn(docs, value), type: (value) => indexIn(types, value) },
    docs: () => [...docs.keys()],
    types: () => [...types.keys()]
  }
}

/** The tables a compact snapshot read holds, each string once (the partition's own). */
export interface CompactStrings {
  docs: readonly string[]
  types: readonly string[]
  /**
   * Each table document's number in the partition's `StringNumbers` once a part held it: a load that keeps one table
   * for the whole partition numbers each document once, not once a part (a map lookup a part was 15 s of a 1M start-up).
   */
  docNumbers?: number[]
  /**
   * Each table document's place in the documents' id order (`ranksOf`): a restore finds its parts in document order by
   * comparing these, not the ids (comparing the ids of every part was a tenth of a 1M start-up's graph load).
   */
  docRanks?: Int32Array
}

/** Each string's place in ascending order of the strings (`<`), by its index: equal strings get distinct places. */
export function ranksOf(strings: readonly string[]): Int32Array {
  const order = Array.from(strings.keys()).sort((a, b) => (strings[a]! < strings[b]! ? -1 : strings[a]! > strings[b]! ? 1 : a - b))
  const ranks = new Int32Array(strings.length)
  order.forEach((index, rank) => (ranks[index] = rank))
  return ranks
}

/**
 * A derived item's parts by document id, and the item built from them when read. Part p is `stride` cells of its kind's
 * columns (`PartStore`) at part `start + p`, in document id order: `DOC` (the document's number × 8, plus `LLM`, `NAMED` and
 * `ODD` flags), `COUNT`, `CHUNKS` (a bit mask), and an entity's `TYPE` (its number + 1, 0 for none). A part the cells
 * cannot hold (a name other than the item's first one, a description, chunk ids not a mask, a count not a 32-bit
 * integer) is `ODD`: those four fields are `EXTRA` slots of `extra` at `p * EXTRA`. A document's part is found by a
 * binary search of the run: a hub cited by thousands of documents needs no map of them (issue 44: those maps were
 * ~1.3 KB a chunk at 30k, the derived graph's largest kind, growing with the namespace).
 */
abstract class DerivedItem<T extends KgEntity | KgRelation> {
  private start = -1
  protected parts = 0
  private built: WeakRef<T> | undefined

  constructor(protected readonly store: PartStore) {}

  abstract get id(): string

  // the few items with odd parts keep them in the store, not in a field every item has
  private get extra(): unknown[] | undefined {
    return this.store.extras.get(this)
  }

  private set extra(value: unknown[] | undefined) {
    if (value === undefined) this.store.extras.delete(this)
    else this.store.extras.set(this, value)
  }

  protected abstract get columns(): PartColumns

  /** The name a part's `NAMED` flag stands for (an entity's first name); none for a relation. */
  protected get namedAs(): string | undefined {
    return undefined
  }

  get size(): number {
    return this.parts
  }

  /** The ids of the documents holding a part, ascending. */
  docs(): string[] {
    const docs: string[] = new Array(this.parts)
    for (let p = 0; p < this.parts; p++) docs[p] = this.docAt(p)
    return docs
  }

  /** The part of `doc`, as the port gives it. */
  derivation(doc: string): KgDerivation | undefined {
    const p = this.position(doc)
    return p === undefined ? undefined : this.derivationAt(p)
  }

  /** Replaces the parts of `docs` by `written` (parts of some of those documents); the documents touched. */
  replace(docs: Iterable<string>, written: readonly KgDerivation[]): Set<string> {
    const touched = new Set(docs)
    for (const doc of touched) this.remove(doc)
    for (const part of written) {
      this.remove(part.doc_id)
      this.insert(part.doc_id, part.count, chunksOf(part.doc_id, part.chunk_ids), part.llm === true, part.name, part.type, part.description)
      touched.add(part.doc_id)
    }
    this.built = undefined
    return touched
  }

  /**
   * The parts as a compact snapshot writes them: each part's slots (`DOC`, `COUNT`, `CHUNKS`, `LLM`, and an entity's
   * name, type and description), in the order held, with a document id and a type as their table index, an absent
   * field as null, `llm` as 1, and an entity part's name as 0 when it is the item's name.
   */
  compactSlots(tables: CompactTables): unknown[] {
    const entity = this.columns.stride > TYPE
    const shown = entity ? (this as unknown as DerivedEntity).name : undefined
    const out: unknown[] = []
    for (let p = 0; p < this.parts; p++) {
      const flags = this.cell(p, DOC)
      out.push(tables.doc(this.docAt(p)), this.countAt(p), this.chunksAt(p), flags & LLM ? 1 : null)
      if (entity) {
        const name = this.nameAt(p)
        const type = this.typeAt(p)
        out.push(name === undefined ? null : name === shown ? 0 : name, type === undefined ? null : tables.type(type), this.descriptionAt(p) ?? null)
      }
    }
    return out
  }

  /**
   * Takes as its parts the slots `compactSlots` wrote: indices to the tables' strings, nulls to absent fields, 0 to
   * `shown`, the item's name; nothing is checked but the shape. `eachDoc` is told each part's document, as its table index.
   */
  restore(slots: unknown[], strings: CompactStrings, shown?: string, eachDoc?: (doc: number) => void): void {
    const entity = this.columns.stride > TYPE
    const width = entity ? ENTITY_SLOTS : RELATION_SLOTS
    if (slots.length % width !== 0) throw new RangeError(`item ${this.id}: ${slots.length} slots are not parts of ${width}`)
    this.clear()
    this.resize(slots.length / width)
    const ranks = strings.docRanks
    // in document order while each part's rank is above the last one's (known only with the ranks)
    let ordered = ranks !== undefined
    let lastRank = -1
    // the item has no odd part's fields until a part is odd (`clear` let go of them)
    let hasExtra = false
    for (let at = 0, p = 0; at < slots.length; at += width, p++) {
      const doc = slots[at]
      eachDoc?.(doc as number)
      const docNumber = this.holdDoc(strings, doc)
      if (ordered) {
        const rank = ranks![doc as number]!
        ordered = rank > lastRank
        lastRank = rank
      }
      const count = slots[at + 1] as number
      const chunks = slots[at + 2] as Chunks
      const name = entity ? slots[at + 4] : null
      const type = entity ? slots[at + 5] : null
      const description = entity ? (slots[at + 6] as string | null) ?? undefined : undefined
      const shownName = name === null ? undefined : name === 0 ? shown : (name as string)
      const odd = this.writeCells(p, docNumber, count, chunks, slots[at + 3] === 1, shownName,
        type === null ? undefined : tableString(strings.types, type, this.id), description)
      if (odd || hasExtra) {
        this.writeExtra(p, odd, shownName, description, chunks, count)
        hasExtra = true
      }
    }
    // this build writes them in document order; an older one in the order it held them
    if (!ordered) this.sortParts()
    this.built = undefined
  }

  item(): T {
    const held = this.built?.deref()
    if (held) return held
    const item = freezeItem(this.peek())
    this.built = new WeakRef(item)
    return item
  }

  /** The item as `item()` gives it, without keeping it (a snapshot reads every item once). */
  peek(): T {
    return this.built?.deref() ?? this.build(Array.from({ length: this.parts }, (_, p) => this.derivationAt(p)))
  }

  /** The length of the item's run (`PartColumns.repack`). */
  get capacity(): number {
    return this.parts === 0 ? 0 : capacityOf(this.parts)
  }

  moveRun(cells: Int32Array, at: number): number {
    if (this.parts === 0) return at
    const { stride, cells: from } = this.columns
    // a run is a few cells: a loop costs less than the view `subarray` makes for each
    for (let i = this.start * stride, j = at * stride, end = (this.start + this.parts) * stride; i < end; i++, j++) cells[j] = from[i]!
    this.start = at
    return at + capacityOf(this.parts)
  }

  /** Lets go of every part (the item leaves its partition). */
  clear(): void {
    while (this.parts > 0) this.removeAt(this.parts - 1)
    this.extra = undefined
    this.built = undefined
  }

  protected position(doc: string): number | undefined {
    const n = this.store.docs.numberOf(doc)
    if (n === undefined) return undefined
    // most items have a few parts: comparing numbers costs less than a search comparing strings
    if (this.parts <= SCAN_UP_TO) {
      for (let p = 0; p < this.parts; p++) if (this.cell(p, DOC) >>> FLAG_BITS === n) return p
      return undefined
    }
    const p = this.lowerBound(doc)
    return p < this.parts && this.docAt(p) === doc ? p : undefined
  }

  /** The first part whose document id is not below `doc`. */
  private lowerBound(doc: string): number {
    let lo = 0
    let hi = this.parts
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.docAt(mid) < doc) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  protected abstract build(parts: KgDerivation[]): T

  protected nameAt(p: number): string | undefined {
    const flags = this.cell(p, DOC)
    if (flags & ODD) return this.extra![p * EXTRA] as string | undefined
    return flags & NAMED ? this.namedAs : undefined
  }

  protected typeAt(p: number): string | undefined {
    if (this.columns.stride <= TYPE) return undefined
    const type = this.cell(p, TYPE)
    return type === 0 ? undefined : this.store.types.string(type - 1)
  }

  protected descriptionAt(p: number): string | undefined {
    return this.cell(p, DOC) & ODD ? (this.extra![p * EXTRA + 1] as string | undefined) : undefined
  }

  protected docAt(p: number): string {
    return this.store.docs.string(this.cell(p, DOC) >>> FLAG_BITS)
  }

  private countAt(p: number): number {
    return this.cell(p, DOC) & ODD ? (this.extra![p * EXTRA + 3] as number) : this.cell(p, COUNT)
  }

  private chunksAt(p: number): Chunks {
    return this.cell(p, DOC) & ODD ? (this.extra![p * EXTRA + 2] as Chunks) : this.cell(p, CHUNKS)
  }

  private cell(p: number, field: number): number {
    const columns = this.columns
    return columns.cells[(this.start + p) * columns.stride + field]!
  }

  private setCell(p: number, field: number, value: number): void {
    const columns = this.columns
    columns.cells[(this.start + p) * columns.stride + field] = value
  }

  /** The part at `p` as the port gives it: the keys in the order a derived write makes them (`planDerivedWrite`). */
  private derivationAt(p: number): KgDerivation {
    const doc = this.docAt(p)
    const part: KgDerivation = { doc_id: doc, chunk_ids: chunkIdsOf(doc, this.chunksAt(p)), count: this.countAt(p) }
    const name = this.nameAt(p)
    const type = this.typeAt(p)
    const description = this.descriptionAt(p)
    if (name !== undefined) part.name = name
    if (type !== undefined) part.type = type
    if (description !== undefined) part.description = description
    if (this.cell(p, DOC) & LLM) part.llm = true
    return part
  }

  /** Adds a part in its document's place; the caller removed the document's part before. */
  private insert(doc: string, count: number, chunks: Chunks, llm: boolean, name?: string, type?: string, description?: string): void {
    const p = this.lowerBound(doc)
    const after = this.parts - p
    this.resize(this.parts + 1)
    if (after > 0) this.columns.move(this.start + p, this.start + p + 1, after)
    this.extra?.splice(p * EXTRA, 0, undefined, undefined, undefined, undefined)
    this.write(p, this.store.docs.hold(doc), count, chunks, llm, name, type, description)
  }

  /** A hold of the table document `index` names; its number. */
  private holdDoc(strings: CompactStrings, index: unknown): number {
    const known = strings.docNumbers?.[index as number]
    if (known !== undefined) return this.store.docs.holdAgain(known)
    const docNumber = this.store.docs.hold(tableString(strings.docs, index, this.id))
    if (strings.docNumbers) strings.docNumbers[index as number] = docNumber
    return docNumber
  }

  /** Writes part `p`, one of the item's parts, of the document held as `docNumber`, taking a hold of its type. */
  private write(p: number, docNumber: number, count: number, chunks: Chunks, llm: boolean, name?: string, type?: string, description?: string): void {
    const odd = this.writeCells(p, docNumber, count, chunks, llm, name, type, description)
    if (odd || this.extra) this.writeExtra(p, odd, name, description, chunks, count)
  }

  /** `write`'s cells of part `p` (its odd fields are `writeExtra`'s); whether the part is `ODD`. */
  private writeCells(p: number, docNumber: number, count: number, chunks: Chunks, llm: boolean, name?: string, type?: string, description?: string): boolean {
    const named = name !== undefined && name === this.namedAs
    const odd = (name !== undefined && !named) || description !== undefined || typeof chunks !== 'number' || (count | 0) !== count
    this.setCell(p, DOC, docNumber * (1 << FLAG_BITS) + (llm ? LLM : 0) + (named ? NAMED : 0) + (odd ? ODD : 0))
    this.setCell(p, COUNT, odd ? 0 : count)
    this.setCell(p, CHUNKS, odd ? 0 : (chunks as number))
    if (this.columns.stride > TYPE) this.setCell(p, TYPE, type === undefined ? 0 : this.store.types.hold(type) + 1)
    return odd
  }

  /** Part `p`'s slots of `extra` (made when the item has none): its fields when it is `ODD`, else none. */
  private writeExtra(p: number, odd: boolean, name: string | undefined, description: string | undefined, chunks: Chunks, count: number): void {
    let extra = this.extra
    if (!extra) this.extra = extra = new Array<unknown>(this.parts * EXTRA).fill(undefined)
    const at = p * EXTRA
    extra[at] = odd ? name : undefined
    extra[at + 1] = odd ? description : undefined
    extra[at + 2] = odd ? chunks : undefined
    extra[at + 3] = odd ? count : undefined
  }

  /** Removes `doc`'s part: the parts after it move up one. */
  private remove(doc: string): void {
    const p = this.position(doc)
    if (p !== undefined) this.removeAt(p)
  }

  private removeAt(p: number): void {
    const last = this.parts - 1
    const extra = this.extra
    this.store.docs.release(this.cell(p, DOC) >>> FLAG_BITS)
    if (this.columns.stride > TYPE && this.cell(p, TYPE) !== 0) this.store.types.release(this.cell(p, TYPE) - 1)
    if (p !== last) this.columns.move(this.start + p + 1, this.start + p, last - p)
    if (extra) {
      if (last === 0) this.extra = undefined
      else extra.splice(p * EXTRA, EXTRA)
    }
    this.resize(last)
  }

  /** Puts the parts in document id order, their cells and odd fields with them, unless they are in it. */
  private sortParts(): void {
    let sorted = true
    for (let p = 1; p < this.parts && sorted; p++) sorted = this.docAt(p - 1) < this.docAt(p)
    if (sorted) return
    const order = Array.from({ length: this.parts }, (_, p) => p)
    const docs = this.docs()
    order.sort((a, b) => (docs[a]! < docs[b]! ? -1 : docs[a]! > docs[b]! ? 1 : 0))
    const { stride, cells } = this.columns
    const from = cells.slice(this.start * stride, (this.start + this.parts) * stride)
    order.forEach((q, p) => cells.set(from.subarray(q * stride, (q + 1) * stride), (this.start + p) * stride))
    const extra = this.extra
    if (extra) this.extra = order.flatMap((q) => extra.slice(q * EXTRA, (q + 1) * EXTRA))
  }

  /** Gives the item a run for `parts` parts, moving its parts when the run's length changes. */
  private resize(parts: number): void {
    const columns = this.columns
    const had = this.parts === 0 ? 0 : capacityOf(this.parts)
    const needs = parts === 0 ? 0 : capacityOf(parts)
    if (had !== needs) {
      const start = needs === 0 ? -1 : columns.allocate(needs)
      if (had > 0) {
        if (needs > 0) columns.move(this.start, start, Math.min(this.parts, parts))
        columns.release(this.start, had)
      }
      this.start = start
    }
    this.parts = parts
  }
}

export class DerivedEntity extends DerivedItem<KgEntity> {
  /** The document whose part gives each field: the first part, in document order, that has it. */
  private firstName: string | undefined
  private firstType: string | undefined
  private firstDescription: string | undefined
  /** The name as last read, until the parts change: a write reads an entity's name many times (at 800k chunks finding its part was 9% of an ingest's CPU). */
  private nameRead: string | undefined

  /** `fallbackName`: the name when no part gives one. */
  constructor(readonly id: string, readonly fallbackName: string, store = new PartStore()) {
    super(store)
  }

  get name(): string {
    return (this.nameRead ??= this.first('name') ?? this.fallbackName)
  }

  get type(): string | undefined {
    return this.first('type')
  }

  get description(): string | undefined {
    return this.first('description')
  }

  protected get columns(): PartColumns {
    return this.store.entityParts
  }

  protected override get namedAs(): string {
    return this.fallbackName
  }

  override replace(docs: Iterable<string>, written: readonly KgDerivation[]): Set<string> {
    const touched = super.replace(docs, written)
    this.nameRead = undefined
    this.firstName = this.firstWith('name', this.firstName, touched)
    this.firstType = this.firstWith('type', this.firstType, touched)
    this.firstDescription = this.firstWith('description', this.firstDescription, touched)
    return touched
  }

  override restore(slots: unknown[], strings: CompactStrings, shown?: string, eachDoc?: (doc: number) => void): void {
    super.restore(slots, strings, shown, eachDoc)
    this.nameRead = undefined
    this.firstName = this.firstAt('name')
    this.firstType = this.firstAt('type')
    this.firstDescription = this.firstAt('description')
  }

  /** The first document whose part has the field, in the parts' order (their documents'): what `firstWith` finds over every part. */
  private firstAt(key: Field): string | undefined {
    for (let p = 0; p < this.parts; p++) if (this.fieldAt(p, key) !== undefined) return this.docAt(p)
    return undefined
  }

  protected build(parts: KgDerivation[]): KgEntity {
    return entityOf(this.id, this.fallbackName, parts)
  }

  private first(key: Field): string | undefined {
    const doc = key === 'name' ? this.firstName : key === 'type' ? this.firstType : this.firstDescription
    return doc === undefined ? undefined : this.field(doc, key)
  }

  /** A field of `doc`'s part, or undefined without that part. */
  private field(doc: string, key: Field): string | undefined {
    const p = this.position(doc)
    return p === undefined ? undefined : this.fieldAt(p, key)
  }

  private fieldAt(p: number, key: Field): string | undefined {
    return key === 'name' ? this.nameAt(p) : key === 'type' ? this.typeAt(p) : this.descriptionAt(p)
  }

  /** The first document with the field after a write touched `touched`: only the touched parts are read, unless the part that gave it lost it. */
  private firstWith(key: Field, current: string | undefined, touched: ReadonlySet<string>): string | undefined {
    const lost = current !== undefined && touched.has(current) && this.field(current, key) === undefined
    let first = lost ? undefined : current
    for (const doc of lost ? this.docs() : touched) {
      if (this.field(doc, key) !== undefined && (first === undefined || doc < first)) first = doc
    }
    return first
  }
}

/**
 * A derived relation keeps no id: its id is `deriveRelationId` of its ends and type (each a string its partition holds
 * anyway), built when asked for, unless it was stored under another one (issue 44: the ids were ~290 B a chunk).
 */
export class DerivedRelation extends DerivedItem<KgRelation> {
  private readonly otherId: string | undefined

  constructor(id: string, readonly source: string, readonly target: string, readonly type: string, store = new PartStore()) {
    super(store)
    this.otherId = id === deriveRelationId(this) ? undefined : id
  }

  get id(): string {
    return this.otherId ?? deriveRelationId(this)
  }

  /** Whether `id` is this relation's, without building its id (`deriveRelationId`: `<source>-[<type>]-><target>`). */
  hasId(id: string): boolean {
    if (this.otherId !== undefined) return id === this.otherId
    const { source, type, target } = this
    const at = source.length
    return id.length === at + type.length + target.length + 5 && id.startsWith(source) && id.endsWith(target) &&
      id.charCodeAt(at) === 45 && id.charCodeAt(at + 1) === 91 && id.startsWith(type, at + 2) && id.startsWith(']->', at + 2 + type.length)
  }

  protected get columns(): PartColumns {
    return this.store.relationParts
  }

  protected build(parts: KgDerivation[]): KgRelation {
    return relationOf(this.id, this.source, this.target, this.type, parts)
  }
}

/** Derived items by id: in a map keyed by the id the item keeps, or by the id's hash (`ByIdHash`) for one that keeps none. */
interface DerivedIndex<S> {
  readonly size: number
  get(id: string): S | undefined
  set(item: S): void
  delete(id: string): void
  values(): IterableIterator<S>
}

export class ById<S extends { readonly id: string }> implements DerivedIndex<S> {
  private readonly items = new Map<string, S>()

  get size(): number {
    return this.items.size
  }

  get(id: string): S | undefined {
    return this.items.get(id)
  }

  set(item: S): void {
    this.items.set(item.id, item)
  }

  delete(id: string): void {
    this.items.delete(id)
  }

  values(): IterableIterator<S> {
    return this.items.values()
  }
}

/**
 * Items keyed by a 32-bit hash of their id (a small integer, which a map keeps without a string), the few whose hashes
 * collide in an array under it; an item's id is built to tell them apart.
 */
export class ByIdHash<S extends { readonly id: string; hasId(id: string): boolean }> implements DerivedIndex<S> {
  private readonly items = new Map<number, S | S[]>()
  private count = 0

  get size(): number {
    return this.count
  }

  get(id: string): S | undefined {
    const held = this.items.get(hashOf(id))
    if (held === undefined) return undefined
    if (Array.isArray(held)) return held.find((item) => item.hasId(id))
    return held.hasId(id) ? held : undefined
  }

  set(item: S): void {
    const id = item.id
    const hash = hashOf(id)
    const held = this.items.get(hash)
    if (held === undefined) this.items.set(hash, item)
    else if (!Array.isArray(held)) this.items.set(hash, held.hasId(id) ? item : [held, item])
    else {
      const at = held.findIndex((other) => other.hasId(id))
      if (at >= 0) {
        held[at] = item
        return
      }
      held.push(item)
    }
    if (held === undefined || Array.isArray(held) || !held.hasId(id)) this.count++
  }

  delete(id: string): void {
    const hash = hashOf(id)
    const held = this.items.get(hash)
    if (held === undefined) return
    if (!Array.isArray(held)) {
      if (!held.hasId(id)) return
      this.items.delete(hash)
    } else {
      const at = held.findIndex((item) => item.hasId(id))
      if (at < 0) return
      held.splice(at, 1)
      this.items.set(hash, held.length === 1 ? held[0]! : held)
    }
    this.count--
  }

  *values(): IterableIterator<S> {
    for (const held of this.items.values()) {
      if (Array.isArray(held)) yield* held
      else yield held
    }
  }
}

/** FNV-1a over the id's UTF-16 code units, as a signed 32-bit integer. */
function hashOf(id: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193)
  return hash | 0
}

/** Items by id: imported ones whole, derived ones as their parts. */
export class ItemTable<T extends KgEntity | KgRelation, S extends DerivedItem<T>> {
  private readonly whole = new Map<string, T>()

  constructor(private readonly derivedItems: DerivedIndex<S>) {}

  get size(): number {
    return this.whole.size + this.derivedItems.size
  }

  has(id: string): boolean {
    return this.whole.has(id) || this.derivedItems.get(id) !== undefined
  }

  /** The item, frozen (a derived one built from its parts if it is not held from an earlier read). */
  get(id: string): T | undefined {
    return this.whole.get(id) ?? this.derivedItems.get(id)?.item()
  }

  derived(id: string): S | undefined {
    return this.derivedItems.get(id)
  }

  /** The stored id equal to `id` (one string for every holder of it), or `id` when none is stored. */
  canonical(id: string): string {
    return this.derivedItems.get(id)?.id ?? this.whole.get(id)?.id ?? id
  }

  setWhole(item: T): void {
    this.dropDerived(item.id)
    this.whole.set(item.id, freezeItem(item))
  }

  setDerived(item: S): void {
    this.whole.delete(item.id)
    this.derivedItems.set(item)
  }

  delete(id: string): void {
    this.whole.delete(id)
    this.dropDerived(id)
  }

  /** Removes a derived item, letting go of its parts' cells. */
  private dropDerived(id: string): void {
    this.derivedItems.get(id)?.clear()
    this.derivedItems.delete(id)
  }

  derivedValues(): IterableIterator<S> {
    return this.derivedItems.values()
  }

  ids(): string[] {
    const ids = [...this.whole.keys()]
    for (const item of this.derivedItems.values()) ids.push(item.id)
    return ids
  }

  /** Every item, the derived ones built but not kept (`peek`). */
  snapshot(): T[] {
    return [...this.whole.values(), ...[...this.derivedItems.values()].map((item) => item.peek())]
  }
}

function tableString(table: readonly string[], index: unknown, id: string): string {
  const value = typeof index === 'number' ? table[index] : undefined
  if (value === undefined) throw new RangeError(`item ${id}: no string ${String(index)} in the snapshot's table`)
  return value
}

/** The chunk ids as indices when each is `<doc>#<index>` (a single one as a number), else as given. */
function chunksOf(doc: string, ids: readonly string[]): Chunks {
  const indices: number[] = []
  let mask = 0
  for (const id of ids) {
    const index = indexIn(doc, id)
    if (index === undefined) return [...ids]
    if (index < MASK_BITS && mask < 2 ** index) mask |= 2 ** index
    else mask = -1
    indices.push(index)
  }
  return mask >= 0 ? mask : indices
}

function chunkIdsOf(doc: string, chunks: Chunks): string[] {
  if (typeof chunks !== 'number') return chunks.map((c: number | string) => (typeof c === 'number' ? `${doc}#${c}` : c))
  const ids: string[] = []
  for (let i = 0; i < MASK_BITS; i++) if (chunks & (2 ** i)) ids.push(`${doc}#${i}`)
  return ids
}

/** `n` when `id` is exactly `${doc}#${n}` for a non-negative integer n (so that it is rebuilt as the same string). */
function indexIn(doc: string, id: string): number | undefined {
  if (id.length <= doc.length + 1 || id.charCodeAt(doc.length) !== 35 || !id.startsWith(doc)) return undefined
  const digits = id.slice(doc.length + 1)
  if (!/^(?:0|[1-9]\d{0,8})$/.test(digits)) return undefined
  return Number(digits)
}

function freezePart(part: KgDerivation): KgDerivation {
  Object.freeze(part.chunk_ids)
  return Object.freeze(part)
}

/** Freezes a stored entity or relation and the lists and parts it holds. */
function freezeItem<T extends KgEntity | KgRelation>(item: T): T {
  if ('source_chunk_ids' in item) {
    Object.freeze(item.aliases)
    Object.freeze(item.source_chunk_ids)
  }
  for (const part of item.derived_from ?? []) freezePart(part)
  if (item.derived_from) Object.freeze(item.derived_from)
  return Object.freeze(item)
}
