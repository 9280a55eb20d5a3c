import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import { encodeSnapshotFile, parseSnapshotFile, readRecords, type PendingFold } from './durable-log.js'
import type { FileIdentity } from './file-header.js'

/** A store's state rebuilt from a snapshot payload and the records after it, as the next snapshot payload. */
export type Fold = (snapshot: Buffer | undefined, records: Buffer[]) => Uint8Array

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
 * this thread, so the store's event loop only waits for the rename.
 */
export function serveFold(fold: Fold): void {
  const task = workerData as FoldTask
  const { snapshotFile, foldFile, seq } = task.fold
  const snapshot = readIfExists(snapshotFile)
  const parsed = snapshot ? parseSnapshotFile(snapshot, snapshotFile, task, task.backend) : { seq: 0, payload: undefined }
  const chain = { snapshotSeq: parsed.seq, hasSnapshot: Boolean(snapshot), previous: -1 }
  const { records } = readRecords(readFileSync(foldFile), foldFile, chain, task, task.backend)
  if (chain.previous !== seq) throw new Error(`${foldFile} ends at record ${chain.previous}, the fold was begun at ${seq}`)
  const bytes = encodeSnapshotFile(seq, fold(parsed.payload, records), task)
  const file = `${snapshotFile}.fold.tmp`
  const fd = openSync(file, 'w')
  try {
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  const written: FoldWritten = { file, bytes: bytes.length }
  parentPort!.postMessage(written)
}

function readIfExists(file: string): Buffer | undefined {
  try {
    return readFileSync(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}
