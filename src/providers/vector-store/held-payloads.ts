/**
 * The payloads of one partition in memory, in two columns (issue 44, item 1): each record's document id, and what it
 * holds besides. A payload of exactly `doc_id` then `text` (every Episode collection's) is held as its text alone, with
 * the document id one string for all the document's records; any other payload as its object. A text held in the text
 * of the record that first took the same vector row (the row text) is held as a part of that string: a derived Facet's
 * anchor is its chunk's passage, i.e. the chunk's contextual header, a newline and the chunk's text (the chunk record's
 * text), and its key sentences are mostly parts of that text, as they share its vector. A text equal to the row text is
 * that string. Reads build the payload again, with its keys in the same order, so a snapshot holds the same bytes. A
 * payload that the partition's snapshot (format 2) holds is not held in memory at all: it is read from that file when
 * used (`StoredPayloads`).
 */
import { closeSync, readSync } from 'node:fs'
import { copyPayload, type VectorPayload } from './payload.js'

/** Shorter shared parts are not worth the object that would hold them. */
const LEAST_SHARED_LENGTH = 16

/** A text held as its own beginning (`head`), then `of.slice(start, end)`: `of` is the row text, held anyway. */
class SharedText {
  constructor(
    readonly head: string,
    readonly of: string,
    readonly start: number,
    readonly end: number
  ) {}

  get text(): string {
    return this.head + (this.start === 0 && this.end === this.of.length ? this.of : this.of.slice(this.start, this.end))
  }
}

/**
 * Payloads a snapshot (format 2) holds as JSON, read from the file when used: payload `n` is bytes
 * `[at + ends[n - 1], at + ends[n])` of the snapshot open as `fd` (from `at` for the first). Most records are only ever
 * read as a search hit, so the JSON of all of them (a kilobyte a chunk) stays in the file; its pages are page cache, in
 * no process's resident memory. The descriptor keeps the file's bytes readable after a compaction renames a new
 * snapshot over it, until every record is pointed at the new one.
 */
export interface StoredPayloads {
  fd: number
  at: number
  ends: Uint32Array
}

/** Bytes read at once by a pass over many records in order (a filter, a scroll, a snapshot written). */
const READ_AHEAD_BYTES = 1 << 20

/** A number: the payload's JSON in {@link StoredPayloads}, not read yet. */
type Held = string | SharedText | VectorPayload | number

export class HeldPayloads {
  private docs: string[] = []
  private held: Held[] = []
  private stored: StoredPayloads | undefined
  /** Records whose payload is still JSON in {@link stored}; its file is closed once none is. */
  private unparsed = 0
  /** During {@link inOrder}: the stored bytes read last, from file offset `from`. */
  private ahead: { from: number; bytes: Buffer } | undefined
  private readingAhead = false

  /**
   * Takes `stored` (its descriptor becomes this object's to close) for the {@link setStored} calls that follow, which
   * must come next; a file no record is set to is closed at once.
   */
  holdStored(stored: StoredPayloads, records: number): void {
    this.closeStored()
    this.stored = stored
    if (records === 0) this.closeStored()
  }

  /** Sets record `index` (the next one when `index` is `length`) to payload number `n` of the JSON held. */
  setStored(index: number, docId: string, n: number): void {
    this.forget(index)
    this.docs[index] = docId
    this.held[index] = n
    this.unparsed += 1
  }

  /**
   * Every record's payload is now payload `index` of `stored`: a snapshot of exactly these records, just written. What
   * was held for them goes (a file read before included).
   */
  storedAs(stored: StoredPayloads): void {
    this.closeStored()
    this.stored = stored
    for (let index = 0; index < this.held.length; index++) this.held[index] = index
    this.unparsed = this.held.length
    if (this.unparsed === 0) this.closeStored()
  }

  /**
   * A copy of what is held now, for a snapshot written while writes go on (the held values are never changed in place,
   * only replaced, so the copy shares them). The payloads still JSON are read through `openStored()`, a descriptor of the
   * same file that is the copy's own, so it stays readable whatever this object closes; {@link closeStored} closes it.
   */
  frozen(openStored: () => number): HeldPayloads {
    const copy = new HeldPayloads()
    copy.docs = this.docs.slice()
    copy.held = this.held.slice()
    if (this.stored && this.unparsed > 0) {
      copy.stored = { ...this.stored, fd: openStored() }
      copy.unparsed = this.unparsed
    }
    return copy
  }

  /**
   * A snapshot written from a {@link frozen} copy is in place: record `indexOf[n]` holds payload `n` of `next` now (none
   * where it is -1). The records it does not name must hold their payloads in memory (written since the copy was taken):
   * none may still be read from the file replaced, which is closed. `next`'s descriptor becomes this object's.
   */
  storedAgain(next: StoredPayloads | undefined, indexOf: Int32Array): void {
    let replaced = 0
    let named = 0
    for (let n = 0; n < indexOf.length; n++) {
      const index = indexOf[n]!
      if (index < 0) continue
      named += 1
      if (typeof this.held[index] === 'number') replaced += 1
    }
    if (replaced !== this.unparsed || (named > 0 && !next)) {
      if (next) closeSync(next.fd)
      throw new Error(`${this.unparsed - replaced} payloads would still be read from the snapshot replaced`)
    }
    this.closeStored()
    this.stored = next
    for (let n = 0; n < indexOf.length; n++) if (indexOf[n]! >= 0) this.held[indexOf[n]!] = n
    this.unparsed = named
    if (this.unparsed === 0) this.closeStored()
  }

  /** Whether record `index`'s payload is still JSON. */
  unparsedAt(index: number): boolean {
    return typeof this.held[index] === 'number'
  }

  /** The length of record `index`'s JSON when it is still JSON, else -1. */
  storedLength(index: number): number {
    const held = this.held[index]
    if (typeof held !== 'number') return -1
    const { ends } = this.stored!
    return ends[held]! - (held === 0 ? 0 : ends[held - 1]!)
  }

  /**
   * Record `index`'s payload as JSON (UTF-8), without parsing it when it is still JSON. Within {@link inOrder}, valid only
   * until the next read.
   */
  json(index: number): Uint8Array {
    const held = this.held[index]!
    return typeof held === 'number' ? this.read(held) : Buffer.from(JSON.stringify(this.peek(index)))
  }

  /** Runs `pass`, which reads many records in about their order, reading the file a megabyte at a time. */
  inOrder<T>(pass: () => T): T {
    this.readingAhead = true
    try {
      return pass()
    } finally {
      this.readingAhead = false
      this.ahead = undefined
    }
  }

  /** Closes the file of the payloads still JSON (the store is closing: no record is read again). */
  closeStored(): void {
    if (this.stored) closeSync(this.stored.fd)
    this.stored = undefined
    this.ahead = undefined
  }

  /** The record at `index` is about to be replaced or dropped: one JSON payload fewer when it was one. */
  private forget(index: number): void {
    if (typeof this.held[index] === 'number' && --this.unparsed === 0) this.closeStored()
  }

  /** Payload `n`'s JSON, read from the file. */
  private read(n: number): Buffer {
    const { fd, at, ends } = this.stored!
    const from = at + (n === 0 ? 0 : ends[n - 1]!)
    const length = ends[n]! - (from - at)
    const ahead = this.ahead
    if (ahead && from >= ahead.from && from + length <= ahead.from + ahead.bytes.length) {
      return ahead.bytes.subarray(from - ahead.from, from - ahead.from + length)
    }
    const size = this.readingAhead ? Math.max(length, Math.min(READ_AHEAD_BYTES, at + ends[ends.length - 1]! - from)) : length
    const bytes = Buffer.allocUnsafe(size)
    const read = readSync(fd, bytes, 0, size, from)
    if (read !== size) throw new Error(`stored payload ${n}: ${read} of ${size} bytes read`)
    if (this.readingAhead) this.ahead = { from, bytes }
    return bytes.subarray(0, length)
  }

  private parse(n: number): VectorPayload {
    return JSON.parse(this.read(n).toString('utf8')) as VectorPayload
  }

  get length(): number {
    return this.docs.length
  }

  docIdAt(index: number): string {
    return this.docs[index]!
  }

  /**
   * The payload of record `index` for reading only: the held object itself when it was kept whole (not to be changed or
   * handed out), else a new one.
   */
  peek(index: number): VectorPayload {
    const held = this.held[index]!
    if (typeof held === 'number') return this.parse(held)
    if (typeof held === 'string') return { doc_id: this.docs[index]!, text: held }
    if (held instanceof SharedText) return { doc_id: this.docs[index]!, text: held.text }
    return held
  }

  /** The payload of record `index`, the caller's own. */
  copy(index: number): VectorPayload {
    const held = this.held[index]!
    return typeof held === 'string' || typeof held === 'number' || held instanceof SharedText ? this.peek(index) : copyPayload(held)
  }

  /**
   * Sets record `index` (the next one when `index` is `length`). `docId` is the string the partition holds for the
   * payload's document (the one its other records hold), `rowText` the text of the record that first took its row.
   */
  set(index: number, payload: VectorPayload, docId: string, rowText: string | undefined): void {
    this.forget(index)
    this.docs[index] = docId
    this.held[index] = isDocAndText(payload) ? textOf(payload.text, rowText) : payload
  }

  /** Moves the last record into `index` and drops the last. */
  moveLastTo(index: number): void {
    this.forget(index)
    const last = this.docs.length - 1
    if (index !== last) {
      this.docs[index] = this.docs[last]!
      this.held[index] = this.held[last]!
    }
    this.docs.pop()
    this.held.pop()
  }

  clear(): void {
    this.docs.length = 0
    this.held.length = 0
    this.closeStored()
    this.unparsed = 0
  }
}

function isDocAndText(payload: VectorPayload): boolean {
  if (typeof payload.text !== 'string') return false
  let keys = 0
  for (const key in payload) {
    if ((keys === 0 && key !== 'doc_id') || (keys === 1 && key !== 'text') || keys === 2) return false
    keys += 1
  }
  return keys === 2
}

function textOf(text: string, rowText: string | undefined): string | SharedText {
  if (rowText === undefined || rowText.length < LEAST_SHARED_LENGTH) return text
  if (rowText === text) return rowText
  if (text.length > rowText.length) {
    return text.endsWith(rowText) ? new SharedText(ownCopy(text.slice(0, text.length - rowText.length)), rowText, 0, rowText.length) : text
  }
  const start = text.length >= LEAST_SHARED_LENGTH ? rowText.indexOf(text) : -1
  return start < 0 ? text : new SharedText('', rowText, start, start + text.length)
}

/**
 * A string of its own: V8 makes a long slice a view that keeps the whole string alive, which would keep the very text
 * this saves. Joining the code units builds a new flat string.
 */
const ownCopy = (s: string): string => (s.length < 13 ? s : s.split('').join(''))
