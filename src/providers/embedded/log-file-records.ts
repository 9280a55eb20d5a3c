import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { UnexpectedResponseError } from '../errors.js'
import { followRecords, type RecordChain } from './durable-log.js'
import { checkHeader, HEADER_MAX_BYTES, type FileIdentity } from './file-header.js'
import { readFrameFrom } from './frame.js'

/** A record's body starts with its sequence number (`DurableLog.append`). */
const SEQ_BYTES = 8

/**
 * A log file's records above a snapshot's sequence number, read from the file a frame at a time each time they are
 * gone over, so that a fold holds one record at a time and never the file: one whose log is larger than what it may
 * hold parsed goes over it once per range of items (`streaming-fold.ts`). `open` checks the chain as `readRecords`
 * does, once; a later pass finds the same frames or throws.
 */
export class LogFileRecords implements Iterable<Buffer> {
  private constructor(
    private readonly file: string,
    private readonly backend: string,
    private readonly start: number,
    /** Where the good records end. */
    private readonly end: number,
    private readonly snapshotSeq: number,
    /** The records' bytes (without their sequence numbers). */
    readonly bytes: number,
    /** The last record's sequence number (-1 when the file holds none). */
    readonly last: number
  ) {}

  static open(file: string, chain: RecordChain, identity: FileIdentity, backend: string): LogFileRecords {
    const { snapshotSeq } = chain
    let bytes = 0
    const { start, end } = withFile(file, (fd, size) => {
      const head = Buffer.alloc(Math.min(size, HEADER_MAX_BYTES))
      readSync(fd, head, 0, head.length, 0)
      const start = checkHeader(head, file, 'log', identity, backend)
      const end = followRecords((offset) => readFrameFrom(fd, size, offset), start, file, chain, backend, (record) => {
        bytes += record.length
      })
      return { start, end }
    })
    return new LogFileRecords(file, backend, start, end, snapshotSeq, bytes, chain.previous)
  }

  *[Symbol.iterator](): Iterator<Buffer> {
    const fd = openSync(this.file, 'r')
    try {
      const size = fstatSync(fd).size
      for (let offset = this.start; offset < this.end; ) {
        const frame = readFrameFrom(fd, size, offset)
        if (!frame) throw new UnexpectedResponseError(this.backend, `${this.file} changed while it was folded: no record at byte ${offset}`)
        if (frame.body.readDoubleLE(0) > this.snapshotSeq) yield frame.body.subarray(SEQ_BYTES)
        offset = frame.end
      }
    } finally {
      closeSync(fd)
    }
  }
}

function withFile<T>(file: string, read: (fd: number, size: number) => T): T {
  const fd = openSync(file, 'r')
  try {
    return read(fd, fstatSync(fd).size)
  } finally {
    closeSync(fd)
  }
}

/** The bytes of a fold's records: known without a pass for a `LogFileRecords`, summed otherwise. */
export function recordBytes(records: Iterable<Buffer>): number {
  if (records instanceof LogFileRecords) return records.bytes
  let bytes = 0
  for (const record of records) bytes += record.length
  return bytes
}
