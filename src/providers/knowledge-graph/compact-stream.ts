/**
 * A compact snapshot payload (`compact-graph.ts`) read a row at a time from blocks of its bytes: its tables whole, then
 * each entity and relation row as its own JSON value, so a fold holds one row of the snapshot at a time. The rows are
 * the values `decodeGraphPayload` would give in its arrays, in the same order.
 */
import type { CompactGraph } from './compact-graph.js'

export type CompactPart =
  | { table: 'docs' | 'types'; values: string[] }
  | { row: 'entities'; value: CompactGraph['entities'][number] }
  | { row: 'relations'; value: CompactGraph['relations'][number] }

const MAGIC = [0, 0x4b, 0x47, 0x32]
const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN = new Set([0x5b, 0x7b])
const CLOSE = new Set([0x5d, 0x7d])
const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d])
const COMMA = 0x2c
const COLON = 0x3a

/** The payload's blocks as bytes read one by one, with the bytes of one JSON value cut out across blocks. */
class ByteReader {
  private block: Buffer = Buffer.alloc(0)
  private at = 0
  private pieces: Buffer[] | undefined
  private start = 0

  constructor(private readonly blocks: Iterator<Buffer>) {}

  /** The next byte, or -1 once the blocks end (the last `next()` of the blocks has run). */
  byte(): number {
    if (this.at >= this.block.length && !this.refill()) return -1
    return this.block[this.at++]!
  }

  /** Gives back the byte just read (it is in the block at hand). */
  unread(): void {
    this.at -= 1
  }

  /** The next byte that is not white space. */
  token(): number {
    let c: number
    do c = this.byte()
    while (SPACE.has(c))
    return c
  }

  /** One whole JSON value from the next byte that is not white space, as text. */
  value(): string {
    const first = this.token()
    if (first < 0) throw new Error('the payload ends inside its JSON')
    this.unread()
    this.pieces = []
    this.start = this.at
    if (first === QUOTE || OPEN.has(first)) this.skipStructured()
    else {
      // a number or a literal ends before the byte that closes or separates it
      for (let c = this.byte(); c >= 0; c = this.byte()) {
        if (CLOSE.has(c) || c === COMMA || SPACE.has(c)) {
          this.unread()
          break
        }
      }
    }
    this.pieces.push(this.block.subarray(this.start, this.at))
    const text = this.pieces.length === 1 ? this.pieces[0]!.toString('utf8') : Buffer.concat(this.pieces).toString('utf8')
    this.pieces = undefined
    return text
  }

  expect(byte: number, what: string): void {
    if (this.token() !== byte) throw new Error(`compact snapshot: expected ${what}`)
  }

  /** Past one string, array or object, a block at a time (the loop every byte of the snapshot goes through). */
  private skipStructured(): void {
    let depth = 0
    let inString = false
    let escaped = false
    for (;;) {
      const block = this.block
      const end = block.length
      let at = this.at
      for (; at < end; at++) {
        const c = block[at]!
        if (inString) {
          if (escaped) escaped = false
          else if (c === BACKSLASH) escaped = true
          else if (c === QUOTE) inString = false
          else continue
        } else if (c === QUOTE) inString = true
        else if (c === 0x5b || c === 0x7b) depth++
        else if (c === 0x5d || c === 0x7d) depth--
        else continue
        if (depth === 0 && !inString) {
          this.at = at + 1
          return
        }
      }
      this.at = at
      if (!this.refill()) throw new Error('the payload ends inside a value')
    }
  }

  /** The next block (what is cut out keeps the rest of this one); false once there is none. */
  private refill(): boolean {
    while (this.at >= this.block.length) {
      if (this.pieces) this.pieces.push(this.block.subarray(this.start))
      this.start = this.at
      const next = this.blocks.next()
      if (next.done) return false
      this.block = next.value
      this.at = this.start = 0
    }
    return true
  }
}

/** The parts of a compact payload, in the order written; throws on bytes that are not that form. */
export function* compactParts(blocks: Iterator<Buffer>): Generator<CompactPart> {
  const reader = new ByteReader(blocks)
  for (const byte of MAGIC) if (reader.byte() !== byte) throw new Error('not a compact snapshot payload')
  reader.expect(0x7b, '{')
  for (let c = reader.token(); c !== 0x7d; c = reader.token()) {
    if (c === COMMA) continue
    if (c !== QUOTE) throw new Error('compact snapshot: expected a key')
    reader.unread()
    const key = JSON.parse(reader.value()) as string
    reader.expect(COLON, ':')
    if (key === 'docs' || key === 'types') {
      const values = JSON.parse(reader.value()) as unknown
      if (!Array.isArray(values)) throw new Error(`compact snapshot without ${key}`)
      yield { table: key, values: values as string[] }
    } else if (key === 'entities' || key === 'relations') {
      reader.expect(0x5b, '[')
      for (let e = reader.token(); e !== 0x5d; e = reader.token()) {
        if (e === COMMA) continue
        if (e < 0) throw new Error('the payload ends inside its JSON')
        reader.unread()
        yield { row: key, value: JSON.parse(reader.value()) as never }
      }
    } else {
      reader.value()
    }
  }
  if (reader.token() !== -1) throw new Error('compact snapshot: bytes after its JSON')
}
