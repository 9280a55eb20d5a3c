/**
 * The embedded store's items by id: an imported entity or relation whole, a derived one as its parts by document. A
 * derived write changes the parts of the documents it wrote and nothing else; the whole item (`entityOf`,
 * `relationOf` of every part) is built when it is read. So a write's cost does not grow with the documents citing an
 * item (docs/derivation.md, "Cost").
 *
 * Memory (issue 44): a namespace holds several derived items per chunk, most of them with one or two parts, so a part
 * is one small object (`Part`) rather than a `KgDerivation` with its own list and strings: its chunk ids are kept as
 * their indices in the document (`<doc_id>#<index>`) when they have that form, its document id is the partition's one
 * string of it, and an item keeps its parts as the part itself, an array, or (past `MAP_FROM` parts) a map by document.
 * A built item is held weakly: a later read finds it while something else holds it, and a collection may take it.
 */
import { entityOf, relationOf } from './derived.js'
import type { KgDerivation, KgEntity, KgRelation } from './port.js'

const FIELDS = ['name', 'type', 'description'] as const
type Field = (typeof FIELDS)[number]

/** Parts an item keeps in an array; past this, in a map by document id (a hub entity cited by many documents). */
const MAP_FROM = 16

/** Chunk ids as their indices in the part's document, or as given when one is not `<doc_id>#<index>`. */
type Chunks = number | readonly number[] | readonly string[]

/** One document's part of a derived item; an entity's also names, types or describes it. */
class Part {
  constructor(
    readonly doc: string,
    readonly chunks: Chunks,
    readonly count: number,
    readonly llm: boolean,
    readonly name: string | undefined,
    readonly type: string | undefined,
    readonly description: string | undefined
  ) {}

  /** The part as the port gives it: the keys in the order a derived write makes them (`planDerivedWrite`). */
  derivation(): KgDerivation {
    const part: KgDerivation = { doc_id: this.doc, chunk_ids: chunkIdsOf(this.doc, this.chunks), count: this.count }
    if (this.name !== undefined) part.name = this.name
    if (this.type !== undefined) part.type = this.type
    if (this.description !== undefined) part.description = this.description
    if (this.llm) part.llm = true
    return part
  }
}

/** The one copy a partition keeps of strings its items repeat: document ids, types. */
export interface SharedStrings {
  /** The partition's string equal to `value` when it holds one, else `value`. */
  doc(value: string): string
  type(value: string): string
}

const asIs: SharedStrings = { doc: (value) => value, type: (value) => value }

/** A derived item's parts by document id, and the item built from them when read. */
abstract class DerivedItem<T extends KgEntity | KgRelation> {
  private held: Part | Part[] | Map<string, Part> | undefined
  private built: WeakRef<T> | undefined

  constructor(readonly id: string) {}

  get size(): number {
    const held = this.held
    return held === undefined ? 0 : held instanceof Part ? 1 : Array.isArray(held) ? held.length : held.size
  }

  /** The ids of the documents holding a part. */
  docs(): string[] {
    return this.parts().map((p) => p.doc)
  }

  /** The part of `doc`, as the port gives it. */
  derivation(doc: string): KgDerivation | undefined {
    return this.part(doc)?.derivation()
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
      this.add(new Part(
        doc, chunksOf(doc, part.chunk_ids), part.count, part.llm === true,
        part.name === name ? name : part.name, part.type === undefined ? undefined : shared.type(part.type), part.description
      ))
      touched.add(part.doc_id)
    }
    this.built = undefined
    return touched
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
    return this.built?.deref() ?? this.build(this.parts().map((p) => p.derivation()))
  }

  protected part(doc: string): Part | undefined {
    const held = this.held
    if (held === undefined) return undefined
    if (held instanceof Part) return held.doc === doc ? held : undefined
    return Array.isArray(held) ? held.find((p) => p.doc === doc) : held.get(doc)
  }

  protected parts(): Part[] {
    const held = this.held
    return held === undefined ? [] : held instanceof Part ? [held] : Array.isArray(held) ? held : [...held.values()]
  }

  /** The item's name before a write, whose string a written part equal to it keeps (an entity's parts mostly agree). */
  protected sharedName(): string | undefined {
    return undefined
  }

  protected abstract build(parts: KgDerivation[]): T

  private add(part: Part): void {
    const held = this.held
    if (held === undefined) this.held = part
    else if (held instanceof Part) this.held = [held, part]
    else if (Array.isArray(held)) {
      held.push(part)
      if (held.length > MAP_FROM) this.held = new Map(held.map((p) => [p.doc, p]))
    } else held.set(part.doc, part)
  }

  private remove(doc: string): void {
    const held = this.held
    if (held === undefined) return
    if (held instanceof Part) {
      if (held.doc === doc) this.held = undefined
    } else if (Array.isArray(held)) {
      const at = held.findIndex((p) => p.doc === doc)
      if (at < 0) return
      held[at] = held[held.length - 1]!
      held.pop()
      if (held.length === 1) this.held = held[0]
    } else {
      held.delete(doc)
      if (held.size <= MAP_FROM / 2) this.held = [...held.values()]
    }
  }
}

export class DerivedEntity extends DerivedItem<KgEntity> {
  /** The document whose part gives each field: the first part, in document order, that has it. */
  private firstName: string | undefined
  private firstType: string | undefined
  private firstDescription: string | undefined

  constructor(id: string, private readonly fallbackName: string) {
    super(id)
  }

  get name(): string {
    return this.field('name') ?? this.fallbackName
  }

  get type(): string | undefined {
    return this.field('type')
  }

  get description(): string | undefined {
    return this.field('description')
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

  protected build(parts: KgDerivation[]): KgEntity {
    return entityOf(this.id, this.fallbackName, parts)
  }

  private field(key: Field): string | undefined {
    const doc = key === 'name' ? this.firstName : key === 'type' ? this.firstType : this.firstDescription
    return doc === undefined ? undefined : this.part(doc)![key]
  }

  /** The first document with the field after a write touched `touched`: only the touched parts are read, unless the part that gave it lost it. */
  private firstWith(key: Field, current: string | undefined, touched: ReadonlySet<string>): string | undefined {
    const lost = current !== undefined && touched.has(current) && this.part(current)?.[key] === undefined
    let first = lost ? undefined : current
    for (const doc of lost ? this.docs() : touched) {
      const part = this.part(doc)
      if (part?.[key] !== undefined && (first === undefined || doc < first)) first = part.doc
    }
    return first
  }
}

export class DerivedRelation extends DerivedItem<KgRelation> {
  constructor(id: string, readonly source: string, readonly target: string, readonly type: string) {
    super(id)
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

/** The chunk ids as indices when each is `<doc>#<index>` (a single one as a number), else as given. */
function chunksOf(doc: string, ids: readonly string[]): Chunks {
  const indices: number[] = []
  for (const id of ids) {
    const index = indexIn(doc, id)
    if (index === undefined) return [...ids]
    indices.push(index)
  }
  return indices.length === 1 ? indices[0]! : indices
}

function chunkIdsOf(doc: string, chunks: Chunks): string[] {
  if (typeof chunks === 'number') return [`${doc}#${chunks}`]
  return chunks.map((c: number | string) => (typeof c === 'number' ? `${doc}#${c}` : c))
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
