/**
 * A compact snapshot payload (`compact-graph.ts`) read a row at a time from blocks of its bytes: its tables whole, then
 * each entity and relation row as its own JSON value, so a fold holds one row of the snapshot at a time. The rows are
 * the values `decodeGraphPayload` would give in its arrays, in the same order.
 */
import { ByteReader } from '../embedded/json-stream.js'
import type { CompactGraph } from './compact-graph.js'

export type CompactPart =
  | { table: 'docs' | 'types'; values: string[] }
  | { row: 'entities'; value: CompactGraph['entities'][number] }
  | { row: 'relations'; value: CompactGraph['relations'][number] }

const MAGIC = [0, 0x4b, 0x47, 0x32]
const QUOTE = 0x22
const COMMA = 0x2c
const COLON = 0x3a

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
