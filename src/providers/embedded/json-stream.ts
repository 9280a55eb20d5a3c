/**
 * JSON read a value at a time from blocks of its bytes (`snapshot-stream.ts`), so that a fold holds one row of a
 * snapshot at a time: the reader steps over the structure byte by byte and cuts out one whole value's text across blocks.
 */
const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN = new Set([0x5b, 0x7b])
const CLOSE = new Set([0x5d, 0x7d])
const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d])
const COMMA = 0x2c

/** The payload's blocks as bytes read one by one, with the bytes of one JSON value cut out across blocks. */
export class ByteReader {
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
