/**
 * `readAhead` gives a file's range in pieces, in order, the next piece read while the caller holds one: every byte of
 * the range once for pieces of 1 byte to more than the range; a piece's bytes as the file held them when it was read,
 * and left alone while the next is read (two buffers take turns); a range past the file's end refused at the piece
 * that reaches it, and a caller that stops early leaves no read running and no rejection unhandled.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readAhead } from '../../../src/providers/embedded/durable-file.js'

const dir = mkdtempSync(join(tmpdir(), 'recall-read-ahead-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const SIZE = 1000
const bytesOf = (seed: number) => Buffer.from(Array.from({ length: SIZE }, (_, i) => (i * 31 + seed) % 251))
const fileOf = (name: string, bytes: Buffer): string => {
  const file = join(dir, name)
  writeFileSync(file, bytes)
  return file
}
// small buffers share Node's pool: the same memory is the same bytes of the same ArrayBuffer
const sameMemory = (a: Buffer, b: Buffer) => a.buffer === b.buffer && a.byteOffset === b.byteOffset
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('readAhead', () => {
  const bytes = bytesOf(0)
  const file = fileOf('range', bytes)

  it('gives every byte of the range once, in pieces of the length asked (the last shorter)', async () => {
    const fd = openSync(file, 'r')
    try {
      for (const [from, to] of [[0, SIZE], [17, 999], [500, 500], [3, 4]] as const) {
        for (const pieceBytes of [1, 7, 64, to - from || 1, SIZE + 5]) {
          const pieces: Buffer[] = []
          // copied as they come: a piece's buffer is taken again two pieces later
          for await (const piece of readAhead(fd, from, to, pieceBytes)) pieces.push(Buffer.from(piece))
          expect(Buffer.concat(pieces)).toEqual(bytes.subarray(from, to))
          const lengths = pieces.map((p) => p.length)
          expect(lengths.slice(0, -1).every((n) => n === pieceBytes)).toBe(true)
          expect(pieces.length).toBe(Math.ceil((to - from) / pieceBytes))
        }
      }
    } finally {
      closeSync(fd)
    }
  })

  it('reads the next piece while the caller holds one, into the other buffer', async () => {
    const own = fileOf('ahead', bytes)
    const fd = openSync(own, 'r')
    const writer = openSync(own, 'r+')
    try {
      const pieces = readAhead(fd, 0, 300, 100)
      const first = (await pieces.next()).value as Buffer
      expect(first).toEqual(bytes.subarray(0, 100))
      // the second piece's read was started before the first was given: once it is done, changing the file's bytes
      // there changes nothing the caller is given next
      await pause(300)
      writeSync(writer, Buffer.alloc(100, 0xee), 0, 100, 100)
      expect(first).toEqual(bytes.subarray(0, 100))
      const second = (await pieces.next()).value as Buffer
      expect(second).toEqual(bytes.subarray(100, 200))
      // and the third, read meanwhile into the first piece's buffer, left the second's alone
      await pause(300)
      writeSync(writer, Buffer.alloc(100, 0xdd), 0, 100, 200)
      expect(second).toEqual(bytes.subarray(100, 200))
      const third = (await pieces.next()).value as Buffer
      expect(third).toEqual(bytes.subarray(200, 300))
      expect(sameMemory(third, first)).toBe(true)
      expect(sameMemory(second, first)).toBe(false)
      expect((await pieces.next()).done).toBe(true)
    } finally {
      closeSync(writer)
      closeSync(fd)
    }
  })

  it('refuses a range past the file\'s end at the piece that reaches it, and leaves nothing running when stopped', async () => {
    const fd = openSync(file, 'r')
    try {
      const given: number[] = []
      await expect((async () => {
        for await (const piece of readAhead(fd, 0, SIZE + 50, 400)) given.push(piece.length)
      })()).rejects.toThrow(/the file ended at byte 1000/)
      expect(given).toEqual([400, 400])
      // stopped after the first piece, the failing read under way is waited for and its failure dropped
      for await (const piece of readAhead(fd, 600, SIZE + 50, 400)) {
        expect(piece.length).toBe(400)
        break
      }
      await expect(readAhead(fd, 0, 10, 0).next()).rejects.toThrow(RangeError)
    } finally {
      closeSync(fd)
    }
  })
})
