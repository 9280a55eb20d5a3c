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
import type { KgDerivation, KgEntity, KgRelation } from './port.js'

type Field = 'name' | 'type' | 'description'

/** Parts an item finds by a scan of its array; past this, a map gives each document's part (a hub entity cited by many documents). */
const MAP_FROM = 16

/**
 * Chunk ids by their indices in the part's document: a bit mask (bit i: `<doc>#<i>`) when they are ascending and each
 * below `MASK_BITS`, else the indices; as given when one is not `<doc>#<index>`.
 */
type Chunks = number | readonly number[] | readonly string[]

/** Bits of a chunk mask: it stays a small integer, which an array holds without a box. */
const MASK_BITS = 30

/** Where a part's fields sit among its `stride` slots of the item's array; an entity's part has three more. */
const DOC = 0
const COUNT = 1
const CHUNKS = 2
const LLM = 3
const NAME = 4
const TYPE = 5
const DESCRIPTION = 6
const SLOT = { name: NAME, type: TYPE, description: DESCRIPTION } as const

/** The one copy a partition keeps of strings its items repeat: document ids, types. */
export interface SharedStrings {
  /** The partition's string equal to `value` when it holds one, else `value`. */
  doc(value: string): string
  type(value: string): string
}

const asIs: SharedStrings = { doc: (value) => value, type: (value) => value }

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
}

/**
 * A derived item's parts by document id, and the item built from them when read. The parts are columns of one array:
 * part p's fields are slots `p * stride` to `p * stride + stride - 1` (`DOC`, `COUNT`, … above), in no order; past
 * `MAP_FROM` parts a map gives each document's part number.
 */
abstract class DerivedItem<T extends KgEntity | KgRelation> {
  private held: unknown[] | undefined
  private index: Map<string, number> | undefined
  private built: WeakRef<T> | undefined

  constructor(readonly id: string) {}

  /** Slots per part. */
  protected abstract get stride(): number

  get size(): number {
    return this.held === undefined ? 0 : this.held.length / this.stride
  }

  /** The ids of the documents holding a part. */
  docs(): string[] {
    const docs: string[] = []
    for (let at = DOC; at < (this.held?.length ?? 0); at += this.stride) docs.push(this.held![at] as string)
    return docs
  }

  /** The part of `doc`, as the port gives it. */
  derivation(doc: string): KgDerivation | undefined {
    const p = this.position(doc)
    return p === undefined ? undefined : this.derivationAt(p)
  }

  /**
   * Replaces the parts of `docs` by `written` (parts of some of those documents); the documents touched. A written
   * part's strings are taken from `shared` where the partition already holds them.
   */
  replace(docs: Iterable<string>, written: readonly KgDerivation[], shared: SharedStrings = asIs): Set<string> {
    const name = this.sharedName()
    const touched = new Set(docs)
    for (const doc of touched) this.remove(doc)
    for (const part of written) {
      this.remove(part.doc_id)
      const doc = shared.doc(part.doc_id)
      const chunks = chunksOf(doc, part.chunk_ids)
      const llm = part.llm === true ? true : undefined
      const slots: unknown[] = this.stride > NAME
        ? [doc, part.count, chunks, llm, part.name === name ? name : part.name, part.type === undefined ? undefined : shared.type(part.type), part.description]
        : [doc, part.count, chunks, llm]
      // an array that grows by `push` keeps room for about 16 more slots: most items hold a part or two, so a small
      // one is made anew at its exact length
      if (this.held === undefined) this.held = slots
      else if (this.size < MAP_FROM) this.held = this.held.concat(slots)
      else this.held.push(...slots)
      const size = this.size
      if (this.index) this.index.set(doc, size - 1)
      else if (size > MAP_FROM) this.index = new Map(this.docs().map((d, p) => [d, p]))
      touched.add(part.doc_id)
    }
    this.built = undefined
    return touched
  }

  /**
   * The parts as a compact snapshot writes them: the slots as held, in the order held, with a document id and a type as
   * their table index, an absent field as null, `llm` as 1, and an entity part's name as 0 when it is the item's name.
   */
  compactSlots(tables: CompactTables): unknown[] {
    const held = this.held ?? []
    const stride = this.stride
    const shown = this.sharedName()
    const out: unknown[] = new Array(held.length)
    for (let at = 0; at < held.length; at += stride) {
      out[at + DOC] = tables.doc(held[at + DOC] as string)
      out[at + COUNT] = held[at + COUNT]
      out[at + CHUNKS] = held[at + CHUNKS]
      out[at + LLM] = held[at + LLM] === true ? 1 : null
      if (stride > NAME) {
        const name = held[at + NAME]
        out[at + NAME] = name === undefined ? null : name === shown ? 0 : name
        const type = held[at + TYPE]
        out[at + TYPE] = type === undefined ? null : tables.type(type as string)
        out[at + DESCRIPTION] = held[at + DESCRIPTION] ?? null
      }
    }
    return out
  }

  /**
   * Takes as its parts the slots `compactSlots` wrote (this array itself, turned back in place: indices to the tables'
   * strings, nulls to absent fields, 0 to `shown`, the item's name); nothing is checked but the shape. `eachDoc` is told
   * each part's document, as its table index.
   */
  restore(slots: unknown[], strings: CompactStrings, shown?: string, eachDoc?: (doc: number) => void): void {
    const stride = this.stride
    if (slots.length % stride !== 0) throw new RangeError(`item ${this.id}: ${slots.length} slots are not parts of ${stride}`)
    for (let at = 0; at < slots.length; at += stride) {
      eachDoc?.(slots[at + DOC] as number)
      slots[at + DOC] = tableString(strings.docs, slots[at + DOC], this.id)
      slots[at + LLM] = slots[at + LLM] === 1 ? true : undefined
      if (stride > NAME) {
        const name = slots[at + NAME]
        slots[at + NAME] = name === null ? undefined : name === 0 ? shown : name
        const type = slots[at + TYPE]
        slots[at + TYPE] = type === null ? undefined : tableString(strings.types, type, this.id)
        slots[at + DESCRIPTION] = slots[at + DESCRIPTION] ?? undefined
      }
    }
    this.held = slots.length === 0 ? undefined : slots
    this.index = this.size > MAP_FROM ? new Map(this.docs().map((d, p) => [d, p])) : undefined
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
    return this.built?.deref() ?? this.build(Array.from({ length: this.size }, (_, p) => this.derivationAt(p)))
  }

  /** A field of `doc`'s part (`NAME`, `TYPE`, `DESCRIPTION`), or undefined without that part. */
  protected field(doc: string, slot: number): string | undefined {
    const p = this.position(doc)
    return p === undefined ? undefined : (this.held![p * this.stride + slot] as string | undefined)
  }

  /** The item's name before a write, whose string a written part equal to it keeps (an entity's parts mostly agree). */
  protected sharedName(): string | undefined {
    return undefined
  }

  protected abstract build(parts: KgDerivation[]): T

  private position(doc: string): number | undefined {
    if (this.index) return this.index.get(doc)
    const held = this.held
    if (held === undefined) return undefined
    for (let at = DOC, p = 0; at < held.length; at += this.stride, p++) if (held[at] === doc) return p
    return undefined
  }

  /** The part at `p` as the port gives it: the keys in the order a derived write makes them (`planDerivedWrite`). */
  private derivationAt(p: number): KgDerivation {
    const held = this.held!
    const at = p * this.stride
    const doc = held[at + DOC] as string
    const part: KgDerivation = { doc_id: doc, chunk_ids: chunkIdsOf(doc, held[at + CHUNKS] as Chunks), count: held[at + COUNT] as number }
    if (this.stride > NAME) {
      const [name, type, description] = [held[at + NAME], held[at + TYPE], held[at + DESCRIPTION]] as Array<string | undefined>
      if (name !== undefined) part.name = name
      if (type !== undefined) part.type = type
      if (description !== undefined) part.description = description
    }
    if (held[at + LLM] === true) part.llm = true
    return part
  }

  /** Removes `doc`'s part: the last part moves into its slots. */
  private remove(doc: string): void {
    const p = this.position(doc)
    if (p === undefined) return
    const held = this.held!
    const stride = this.stride
    const last = held.length / stride - 1
    if (p !== last) {
      for (let k = 0; k < stride; k++) held[p * stride + k] = held[last * stride + k]
      this.index?.set(held[p * stride + DOC] as string, p)
    }
    this.index?.delete(doc)
    if (this.index && last <= MAP_FROM / 2) this.index = undefined
    // a shortened array keeps its room: a small one is made anew at its exact length
    if (last === 0) this.held = undefined
    else if (last <= MAP_FROM) this.held = held.slice(0, last * stride)
    else held.length = last * stride
  }
}

export class DerivedEntity extends DerivedItem<KgEntity> {
  /** The document whose part gives each field: the first part, in document order, that has it. */
  private firstName: string | undefined
  private firstType: string | undefined
  private firstDescription: string | undefined

  /** `fallbackName`: the name when no part gives one. */
  constructor(id: string, readonly fallbackName: string) {
    super(id)
  }

  get name(): string {
    return this.first('name') ?? this.fallbackName
  }

  get type(): string | undefined {
    return this.first('type')
  }

  get description(): string | undefined {
    return this.first('description')
  }

  protected get stride(): number {
    return 7
  }

  override replace(docs: Iterable<string>, written: readonly KgDerivation[], shared?: SharedStrings): Set<string> {
    const touched = super.replace(docs, written, shared)
    this.firstName = this.firstWith('name', this.firstName, touched)
    this.firstType = this.firstWith('type', this.firstType, touched)
    this.firstDescription = this.firstWith('description', this.firstDescription, touched)
    return touched
  }

  protected override sharedName(): string | undefined {
    return this.name
  }

  override restore(slots: unknown[], strings: CompactStrings, shown?: string, eachDoc?: (doc: number) => void): void {
    super.restore(slots, strings, shown, eachDoc)
    const docs = new Set(this.docs())
    this.firstName = this.firstWith('name', undefined, docs)
    this.firstType = this.firstWith('type', undefined, docs)
    this.firstDescription = this.firstWith('description', undefined, docs)
  }

  protected build(parts: KgDerivation[]): KgEntity {
    return entityOf(this.id, this.fallbackName, parts)
  }

  private first(key: Field): string | undefined {
    const doc = key === 'name' ? this.firstName : key === 'type' ? this.firstType : this.firstDescription
    return doc === undefined ? undefined : this.field(doc, SLOT[key])
  }

  /** The first document with the field after a write touched `touched`: only the touched parts are read, unless the part that gave it lost it. */
  private firstWith(key: Field, current: string | undefined, touched: ReadonlySet<string>): string | undefined {
    const slot = SLOT[key]
    const lost = current !== undefined && touched.has(current) && this.field(current, slot) === undefined
    let first = lost ? undefined : current
    for (const doc of lost ? this.docs() : touched) {
      if (this.field(doc, slot) !== undefined && (first === undefined || doc < first)) first = doc
    }
    return first
  }
}

export class DerivedRelation extends DerivedItem<KgRelation> {
  constructor(id: string, readonly source: string, readonly target: string, readonly type: string) {
    super(id)
  }

  protected get stride(): number {
    return 4
  }

  protected build(parts: KgDerivation[]): KgRelation {
    return relationOf(this.id, this.source, this.target, this.type, parts)
  }
}

/** Items by id: imported ones whole, derived ones as their parts. */
export class ItemTable<T extends KgEntity | KgRelation, S extends DerivedItem<T>> {
  private readonly whole = new Map<string, T>()
  private readonly derivedItems = new Map<string, S>()

  get size(): number {
    return this.whole.size + this.derivedItems.size
  }

  has(id: string): boolean {
    return this.whole.has(id) || this.derivedItems.has(id)
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
    this.derivedItems.delete(item.id)
    this.whole.set(item.id, freezeItem(item))
  }

  setDerived(item: S): void {
    this.whole.delete(item.id)
    this.derivedItems.set(item.id, item)
  }

  delete(id: string): void {
    this.whole.delete(id)
    this.derivedItems.delete(id)
  }

  ids(): string[] {
    return [...this.whole.keys(), ...this.derivedItems.keys()]
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
