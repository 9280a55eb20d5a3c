import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import { encodeSnapshotFile, parseSnapshotFile, readRecords, type PendingFold } from './durable-log.js'
import type { FileIdentity } from './file-header.js'
import { LogFileRecords } from './log-file-records.js'
import { readSnapshotHead, SnapshotFileWriter, type SnapshotHead } from './snapshot-stream.js'

/** A store's state rebuilt from a snapshot payload and the records after it, as the next snapshot payload. */
export type Fold = (snapshot: Buffer | undefined, records: Buffer[]) => Uint8Array

/**
 * The same fold with the snapshot read a block at a time from its file (`snapshot-stream.ts`) and the next payload
 * written to `out` in pieces, so that neither snapshot is held whole; the records are read from the fold file each time
 * they are gone over (`LogFileRecords`), so that the file is not held whole either.
 */
export type BlockFold = (snapshot: SnapshotHead | undefined, records: Iterable<Buffer>, out: SnapshotFileWriter, backend: string) => void

/** What a fold thread is given: the pending fold and the identity its files carry. */
export interface FoldTask extends FileIdentity {
  fold: PendingFold
  backend: string
}

/** The snapshot a fold thread wrote and synced, beside the store's snapshot, not yet in its place. */
export interface FoldWritten {
  file: string
  bytes: number
}

/**
 * The body of a store's fold thread (`new Worker(entry, {workerData: FoldTask})`): reads the snapshot and
 * the fold file as `open` would, folds them with the store's own replay, and writes the result durably to
 * `<snapshot>.fold.tmp`; the store renames it into place (`DurableLog.finishCompaction`). Every step is on
 * this thread, so the store's event loop only waits for the rename. A `BlockFold` reads and writes the
 * snapshots a block at a time; a `Fold` holds both whole.
 */
export function serveFold(fold: Fold | { blocks: BlockFold }): void {
  const task = workerData as FoldTask
  const { snapshotFile, foldFile, seq } = task.fold
  const file = `${snapshotFile}.fold.tmp`
  let bytes: number
  if ('blocks' in fold) {
    const head = headIfExists(snapshotFile, task)
    const records = LogFileRecords.open(foldFile, { snapshotSeq: head ? head.seq : 0, hasSnapshot: Boolean(head), previous: -1 }, task, task.backend)
    checkFoldEnd(foldFile, records.last, seq)
    const out = new SnapshotFileWriter(file, seq, task)
    try {
      // an empty snapshot payload (a namespace dropped and begun again) is none
      fold.blocks(head && head.payloadBytes > 0 ? head : undefined, records, out, task.backend)
    } catch (error) {
      out.abort()
      throw error
    }
    bytes = out.finish()
  } else {
    const snapshot = readIfExists(snapshotFile)
    const parsed = snapshot ? parseSnapshotFile(snapshot, snapshotFile, task, task.backend) : { seq: 0, payload: undefined }
    const records = foldRecords(task, parsed.seq, Boolean(snapshot))
    const encoded = encodeSnapshotFile(seq, fold(parsed.payload, records), task)
    const fd = openSync(file, 'w')
    try {
      for (let at = 0; at < encoded.length; ) at += writeSync(fd, encoded, at)
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    bytes = encoded.length
  }
  const written: FoldWritten = { file, bytes }
  parentPort!.postMessage(written)
}

/** The fold file's records above the snapshot's sequence number; they must end where the fold was begun. */
function foldRecords(task: FoldTask, snapshotSeq: number, hasSnapshot: boolean): Buffer[] {
  const { foldFile, seq } = task.fold
  const chain = { snapshotSeq, hasSnapshot, previous: -1 }
  const { records } = readRecords(readFileSync(foldFile), foldFile, chain, task, task.backend)
  checkFoldEnd(foldFile, chain.previous, seq)
  return records
}

function checkFoldEnd(foldFile: string, last: number, seq: number): void {
  if (last !== seq) throw new Error(`${foldFile} ends at record ${last}, the fold was begun at ${seq}`)
}

function headIfExists(file: string, task: FoldTask): SnapshotHead | undefined {
  try {
    return readSnapshotHead(file, task, task.backend)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

function readIfExists(file: string): Buffer | undefined {
  try {
    return readFileSync(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}
