/**
 * A partition's record ids by record number, and each id's number (issue 44, item 1), with no string or map entry of
 * its own per record. A record's id is nearly always its document's id and a short tail: a chunk `<doc>#3`, a Facet or
 * FacetPoint `<Episode>/f1/p2`, an Episode's summary, an entity's name or a relation label its document id itself. So
 * a record holds its document id (the one string of every record of that document) and its tail (the one string of
 * every record with that tail); an id that does not begin with its document's is held whole. The number of an id is
 * found through an open-addressing table of record numbers over a hash of the id's characters, which the document id
 * and the tail give without building the id. Ids are built when asked for.
 */

import { SharedStrings } from '../embedded/shared-strings.js'

/** An id that does not begin with its document's id. */
class Whole {
  constructor(readonly id: string) {}
}

type Tail = string | Whole

/** Record ids in record order, as a snapshot writes them and a search breaks its ties. */
export interface IdList {
  readonly length: number
  at(index: number): string
  slice(from: number, to: number): string[]
}

/** Tails held once; past this many new ones are not shared (an imported corpus's odd ids could be many). */
const SHARED_LIMIT = 50_000
/** Longest tail shared: `#1234`, `/f12/p2`; a longer one is most likely an id's own part. */
const SHARED_TAIL_LENGTH = 12
const sharedTails = new SharedStrings(SHARED_LIMIT)

const FNV_OFFSET = 0x811c9dc5
const FNV_PRIME = 0x01000193

/** FNV-1a over UTF-16 code units, carried on from `hash`: the hash of `a + b` is `hashOf(b, hashOf(a))`. */
function hashOf(s: string, hash = FNV_OFFSET): number {
  let h = hash
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME)
  return h
}

function idOf(doc: string, tail: Tail): string {
  return typeof tail === 'string' ? doc + tail : tail.id
}

/** The ids of a frozen copy (`FrozenPartition`): the same references, no table. */
export class FrozenIds implements IdList {
  constructor(
    readonly docs: readonly string[],
    readonly tails: readonly Tail[]
  ) {}

  get length(): number {
    return this.docs.length
  }

  at(index: number): string {
    return idOf(this.docs[index]!, this.tails[index]!)
  }

  slice(from: number, to: number): string[] {
    const out: string[] = []
    for (let i = from; i < Math.min(to, this.docs.length); i++) out.push(this.at(i))
    return out
  }

  /** Whether `ids` holds this copy's record `index` at the same number. */
  sameAt(index: number, ids: RecordIds): boolean {
    return ids.holdsAt(index, this.docs[index]!, this.tails[index]!)
  }
}

const LEAST_CAPACITY = 16

export class RecordIds implements IdList {
  private docs: string[] = []
  private tails: Tail[] = []
  /** Record number + 1 at a slot, 0 for an empty slot; at most half full (linear probing). */
  private table = new Int32Array(LEAST_CAPACITY)

  get length(): number {
    return this.docs.length
  }

  at(index: number): string {
    return idOf(this.docs[index]!, this.tails[index]!)
  }

  /** The document id record `index` is filed under (one string for all of that document's records). */
  docAt(index: number): string {
    return this.docs[index]!
  }

  slice(from: number, to: number): string[] {
    return new FrozenIds(this.docs, this.tails).slice(from, to)
  }

  /** The ids as they stand now, unchanged by later writes. */
  frozen(): FrozenIds {
    return new FrozenIds(this.docs.slice(), this.tails.slice())
  }

  /** Whether record `index` is the id of `doc` and `tail` (a frozen copy's: {@link FrozenIds.sameAt}). */
  holdsAt(index: number, doc: string, tail: Tail): boolean {
    if (index >= this.docs.length) return false
    const held = this.tails[index]!
    if (held === tail && this.docs[index] === doc) return true
    return this.matches(index, idOf(doc, tail))
  }

  /** The number of the record `id`, or -1. */
  indexOf(id: string): number {
    const mask = this.table.length - 1
    for (let slot = hashOf(id) & mask; ; slot = (slot + 1) & mask) {
      const held = this.table[slot]!
      if (held === 0) return -1
      if (this.matches(held - 1, id)) return held - 1
    }
  }

  /** Appends record `id` of document `docId`: its number, or -1 (and nothing added) when `id` is held already. */
  push(id: string, docId: string): number {
    if (2 * (this.docs.length + 1) > this.table.length) this.rehash(2 * this.table.length)
    const mask = this.table.length - 1
    let slot = hashOf(id) & mask
    for (; this.table[slot] !== 0; slot = (slot + 1) & mask) if (this.matches(this.table[slot]! - 1, id)) return -1
    const index = this.docs.length
    this.docs.push(docId)
    this.tails.push(tailOf(id, docId))
    this.table[slot] = index + 1
    return index
  }

  /** Files record `index` (whose id is `id`) under `docId` instead. */
  refile(index: number, id: string, docId: string): void {
    this.docs[index] = docId
    this.tails[index] = tailOf(id, docId)
  }

  /** Removes record `index`; the last record takes its number (as the partition's other columns do). */
  removeAt(index: number): void {
    const last = this.docs.length - 1
    this.unslot(index)
    if (index !== last) {
      this.table[this.slotOf(last)] = index + 1
      this.docs[index] = this.docs[last]!
      this.tails[index] = this.tails[last]!
    }
    this.docs.pop()
    this.tails.pop()
  }

  clear(): void {
    this.docs = []
    this.tails = []
    this.table = new Int32Array(LEAST_CAPACITY)
  }

  private matches(index: number, id: string): boolean {
    const tail = this.tails[index]!
    if (typeof tail !== 'string') return tail.id === id
    const doc = this.docs[index]!
    return id.length === doc.length + tail.length && id.startsWith(doc) && id.endsWith(tail)
  }

  private hashAt(index: number): number {
    const tail = this.tails[index]!
    return typeof tail === 'string' ? hashOf(tail, hashOf(this.docs[index]!)) : hashOf(tail.id)
  }

  /** Record `index`'s slot; a table that lost it is a bug, thrown rather than probed for ever. */
  private slotOf(index: number): number {
    const mask = this.table.length - 1
    let slot = this.hashAt(index) & mask
    for (let probes = 0; this.table[slot] !== index + 1; probes++) {
      if (probes > mask) throw new Error(`record ${index} is not in the id table`)
      slot = (slot + 1) & mask
    }
    return slot
  }

  /** Empties record `index`'s slot and moves the records after it in its run back, so that every probe still finds them. */
  private unslot(index: number): void {
    const mask = this.table.length - 1
    let hole = this.slotOf(index)
    for (let slot = (hole + 1) & mask; this.table[slot] !== 0; slot = (slot + 1) & mask) {
      const home = this.hashAt(this.table[slot]! - 1) & mask
      // the record at `slot` may move to the hole when its home is not within (hole, slot], cyclically
      const between = hole <= slot ? home > hole && home <= slot : home > hole || home <= slot
      if (!between) {
        this.table[hole] = this.table[slot]!
        hole = slot
      }
    }
    this.table[hole] = 0
  }

  private rehash(capacity: number): void {
    const table = new Int32Array(capacity)
    const mask = capacity - 1
    for (let index = 0; index < this.docs.length; index++) {
      let slot = this.hashAt(index) & mask
      while (table[slot] !== 0) slot = (slot + 1) & mask
      table[slot] = index + 1
    }
    this.table = table
  }
}

/** A tail longer than the shared ones would be a slice of the caller's id and keep all of it: that id is held whole. */
function tailOf(id: string, docId: string): Tail {
  return id.startsWith(docId) && id.length - docId.length <= SHARED_TAIL_LENGTH ? sharedTails.share(id.slice(docId.length)) : new Whole(id)
}
