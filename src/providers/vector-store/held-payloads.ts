/**
 * The payloads of one partition in memory, in two columns (issue 44, item 1): each record's document id, and what it
 * holds besides. A payload of exactly `doc_id` then `text` (every Episode collection's) is held as its text alone, with
 * the document id one string for all the document's records; any other payload as its object. A text held in the text
 * of the record that first took the same vector row (the row text) is held as a part of that string: a derived Facet's
 * anchor is its chunk's passage, i.e. the chunk's contextual header, a newline and the chunk's text (the chunk record's
 * text), and its key sentences are mostly parts of that text, as they share its vector. A text equal to the row text is
 * that string. Reads build the payload again, with its keys in the same order, so a snapshot holds the same bytes. A
 * payload read from a format-2 snapshot stays its JSON until it is used (`StoredPayloads`).
 */
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
 * Payloads a snapshot (format 2) holds as JSON, each parsed when it is first used: payload `n` is bytes
 * `[ends[n - 1], ends[n])` of `bytes` (from 0 for the first). Most records of a derived collection are only ever read as
 * a search hit, so parsing them all at start-up cost time and heap for nothing.
 */
export interface StoredPayloads {
  bytes: Buffer
  ends: Uint32Array
}

/** A number: the payload's JSON in {@link StoredPayloads}, not parsed yet. */
type Held = string | SharedText | VectorPayload | number

export class HeldPayloads {
  private readonly docs: string[] = []
  private readonly held: Held[] = []
  private stored: StoredPayloads | undefined
  /** Records whose payload is still JSON in {@link stored}; the JSON goes once none is. */
  private unparsed = 0

  /** Sets the JSON that {@link setStored}'s payload numbers point into (a snapshot's), before those calls. */
  holdStored(stored: StoredPayloads): void {
    this.stored = stored
  }

  /** Sets record `index` (the next one when `index` is `length`) to payload number `n` of the JSON held. */
  setStored(index: number, docId: string, n: number): void {
    this.forget(index)
    this.docs[index] = docId
    this.held[index] = n
    this.unparsed += 1
  }

  /** Whether record `index`'s payload is still JSON. */
  unparsedAt(index: number): boolean {
    return typeof this.held[index] === 'number'
  }

  /** Record `index`'s payload as JSON (UTF-8), without parsing it when it is still JSON. */
  json(index: number): Uint8Array {
    const held = this.held[index]!
    if (typeof held !== 'number') return Buffer.from(JSON.stringify(this.peek(index)))
    const { bytes, ends } = this.stored!
    return bytes.subarray(held === 0 ? 0 : ends[held - 1]!, ends[held]!)
  }

  /** The record at `index` is about to be replaced or dropped: one JSON payload fewer when it was one. */
  private forget(index: number): void {
    if (typeof this.held[index] === 'number' && --this.unparsed === 0) this.stored = undefined
  }

  private parse(n: number): VectorPayload {
    const { bytes, ends } = this.stored!
    return JSON.parse(bytes.toString('utf8', n === 0 ? 0 : ends[n - 1]!, ends[n]!)) as VectorPayload
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
    this.stored = undefined
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
