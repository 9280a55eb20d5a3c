/**
 * The embedded store's items by id: an imported entity or relation whole, a derived one as its parts by document. A
 * derived write changes the parts of the documents it wrote and nothing else; the whole item (`entityOf`,
 * `relationOf` of every part) is built when it is first read after a change. So a write's cost does not grow with
 * the documents citing an item (docs/derivation.md, "Cost").
 */
import { entityOf, relationOf } from './derived.js'
import type { KgDerivation, KgEntity, KgRelation } from './port.js'

const FIELDS = ['name', 'type', 'description'] as const
type Field = (typeof FIELDS)[number]

/** A derived item's parts by document id, and the item built from them once per change. */
abstract class DerivedItem<T extends KgEntity | KgRelation> {
  readonly parts = new Map<string, KgDerivation>()
  private built: T | undefined

  constructor(readonly id: string) {}

  /** Replaces the parts of `docs` by `written` (parts of some of those documents); the documents touched. */
  replace(docs: Iterable<string>, written: readonly KgDerivation[]): Set<string> {
    const touched = new Set(docs)
    for (const doc of touched) this.parts.delete(doc)
    for (const part of written) {
      this.parts.set(part.doc_id, freezePart({ ...part, chunk_ids: [...part.chunk_ids] }))
      touched.add(part.doc_id)
    }
    this.built = undefined
    return touched
  }

  item(): T {
    return (this.built ??= freezeItem(this.build([...this.parts.values()])))
  }

  /** The item as `item()` gives it, without keeping it (a snapshot reads every item once). */
  peek(): T {
    return this.built ?? this.build([...this.parts.values()])
  }

  protected abstract build(parts: KgDerivation[]): T
}

export class DerivedEntity extends DerivedItem<KgEntity> {
  /** The document whose part gives each field: the first part, in document order, that has it. */
  private readonly first: { [K in Field]?: string } = {}

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

  override replace(docs: Iterable<string>, written: readonly KgDerivation[]): Set<string> {
    const touched = super.replace(docs, written)
    for (const key of FIELDS) this.first[key] = this.firstWith(key, touched)
    return touched
  }

  protected build(parts: KgDerivation[]): KgEntity {
    return entityOf(this.id, this.fallbackName, parts)
  }

  private field(key: Field): string | undefined {
    const doc = this.first[key]
    return doc === undefined ? undefined : this.parts.get(doc)![key]
  }

  /** The first document with the field after a write touched `touched`: only the touched parts are read, unless the part that gave it lost it. */
  private firstWith(key: Field, touched: ReadonlySet<string>): string | undefined {
    const current = this.first[key]
    const lost = current !== undefined && touched.has(current) && this.parts.get(current)?.[key] === undefined
    let first = lost ? undefined : current
    for (const doc of lost ? this.parts.keys() : touched) {
      if (this.parts.get(doc)?.[key] !== undefined && (first === undefined || doc < first)) first = doc
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

  /** The item, frozen (a derived one built from its parts if a write changed them since it was last read). */
  get(id: string): T | undefined {
    return this.whole.get(id) ?? this.derivedItems.get(id)?.item()
  }

  derived(id: string): S | undefined {
    return this.derivedItems.get(id)
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
