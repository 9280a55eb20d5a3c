/**
 * The episodic graph's snapshot payload (`{"version":1,"entities":[…],"episodes":[…]}`, as `EpisodicPartition.toSnapshot`
 * gives it and every fold writes it) read a row at a time from blocks of its bytes: a load and a fold hold one row of it
 * at a time, and a payload longer than V8's longest string still reads.
 */
import { ByteReader } from '../embedded/json-stream.js'

/** How a payload in the form written begins, and what stands between its two arrays. */
export const HEAD = Buffer.from('{"version":1,"entities":[', 'utf8')
export const BETWEEN = '],"episodes":['
const COMMA = 0x2c
const CLOSE_ARRAY = 0x5d

export interface SnapshotRow {
  array: 'entities' | 'episodes'
  text: string
}

/** The rows of a payload that begins as `HEAD`: each entity's, then each Episode's JSON text. */
export function* snapshotRows(blocks: Iterator<Buffer>): Generator<SnapshotRow> {
  const reader = new ByteReader(blocks)
  for (const byte of HEAD) if (reader.byte() !== byte) throw new Error('episodic graph snapshot: not in the form written')
  yield* arrayRows(reader, 'entities')
  for (const byte of Buffer.from(BETWEEN.slice(1), 'utf8')) if (reader.token() !== byte) throw new Error('episodic graph snapshot: expected its episodes')
  yield* arrayRows(reader, 'episodes')
  reader.expect(0x7d, '}')
  if (reader.token() !== -1) throw new Error('episodic graph snapshot: bytes after its JSON')
}

/** The values of an array whose `[` was read, up to and with its `]`. */
function* arrayRows(reader: ByteReader, array: SnapshotRow['array']): Generator<SnapshotRow> {
  for (let c = reader.token(); c !== CLOSE_ARRAY; c = reader.token()) {
    if (c === COMMA) continue
    if (c < 0) throw new Error('the payload ends inside its JSON')
    reader.unread()
    yield { array, text: reader.value() }
  }
}
