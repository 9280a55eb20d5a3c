/**
 * `ByteReader`, which cuts one JSON value at a time out of a snapshot's blocks (the episodic graph's and the knowledge
 * graph's loads and folds): every value's text is what `JSON.stringify` wrote, whatever the blocks' length, with strings
 * full of escapes (quotes, backslashes, a backslash as a block's last byte), CJK text and nesting. Expected texts are
 * `JSON.stringify`'s own, not the reader's.
 */
import { describe, expect, it } from 'vitest'
import { ByteReader } from '../../../src/providers/embedded/json-stream.js'
import { seededRandom } from '../../../src/evaluation/statistics.js'

function* blocksOf(bytes: Buffer, size: number): Generator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
}

const PIECES = ['a', '"', '\\', '\\"', '\\\\', '资料', '/', '\n', '\t', 'ab"c', '}', ']', '{', '[', ',', ':', '\u0001', '😀', ' ']

function randomValue(next: () => number, depth: number): unknown {
  const kind = Math.floor(next() * (depth > 3 ? 4 : 6))
  switch (kind) {
    case 0: return Math.floor(next() * 2e6) - 1e6 + (next() < 0.3 ? 0.25 : 0)
    case 1: return next() < 0.5 ? true : null
    case 2:
    case 3: return Array.from({ length: Math.floor(next() * 12) }, () => PIECES[Math.floor(next() * PIECES.length)]).join('')
    case 4: return Array.from({ length: Math.floor(next() * 5) }, () => randomValue(next, depth + 1))
    default: {
      const out: Record<string, unknown> = {}
      for (let i = Math.floor(next() * 5); i > 0; i--) out[`${PIECES[Math.floor(next() * PIECES.length)]}k${i}`] = randomValue(next, depth + 1)
      return out
    }
  }
}

describe('ByteReader', () => {
  it('gives each value as JSON.stringify wrote it, over blocks of every length', () => {
    const next = seededRandom(44)
    const values = Array.from({ length: 400 }, () => randomValue(next, 0))
    const texts = values.map((v) => JSON.stringify(v))
    // a backslash pair and an escaped quote that a block of 2 or 3 bytes splits, and a string that is only escapes
    texts.push(JSON.stringify('x\\'), JSON.stringify('\\"\\'), JSON.stringify({ a: ['\\', '"'] }))
    const bytes = Buffer.from(`${texts.join(' ,\n')} `, 'utf8')
    for (const size of [1, 2, 3, 5, 7, 64, 1000, bytes.length]) {
      const reader = new ByteReader(blocksOf(bytes, size))
      const read: string[] = []
      for (let i = 0; i < texts.length; i++) {
        read.push(reader.value())
        const c = reader.token()
        expect(c === 0x2c || c === -1).toBe(true)
      }
      expect(read).toEqual(texts)
      expect(reader.token()).toBe(-1)
    }
  })

  it('refuses a value the blocks end inside', () => {
    for (const text of ['{"a":"b', '["x\\"]', '"abc\\"']) {
      for (const size of [1, 2, 100]) {
        const reader = new ByteReader(blocksOf(Buffer.from(text, 'utf8'), size))
        expect(() => reader.value()).toThrow(/ends inside a value/)
      }
    }
  })
})
