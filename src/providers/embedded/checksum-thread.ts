/**
 * CRC-32 on a thread of its own. A start-up at 1M chunks checks about 9 GB of vector snapshots, and zlib's crc32 runs
 * at about 1 GB/s on this machine: on a second core the check costs the main thread nothing while it decodes the same
 * bytes. Bytes outside a SharedArrayBuffer (which a thread cannot read without a copy) are checked here, at once.
 */
import { Worker } from 'node:worker_threads'
import { crc32 } from 'node:zlib'

const THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads')
const { crc32 } = require('node:zlib')
parentPort.on('message', ({ id, buffer, at, length }) => parentPort.postMessage({ id, crc: crc32(new Uint8Array(buffer, at, length)) }))
`

let thread: Worker | undefined
const pending = new Map<number, { resolve: (crc: number) => void; bytes: Uint8Array }>()
let nextId = 0

/** The CRC-32 of `bytes`, from the checksum thread when they lie in a SharedArrayBuffer. */
export function crc32OffThread(bytes: Uint8Array): Promise<number> {
  if (!(bytes.buffer instanceof SharedArrayBuffer)) return Promise.resolve(crc32(bytes))
  const worker = started()
  const id = nextId++
  return new Promise((resolve) => {
    pending.set(id, { resolve, bytes })
    if (pending.size === 1) worker.ref()
    worker.postMessage({ id, buffer: bytes.buffer, at: bytes.byteOffset, length: bytes.byteLength })
  })
}

function started(): Worker {
  if (thread) return thread
  const worker = new Worker(THREAD_SOURCE, { eval: true })
  worker.unref()
  worker.on('message', ({ id, crc }: { id: number; crc: number }) => {
    const asked = pending.get(id)
    if (!asked) return
    pending.delete(id)
    if (pending.size === 0) worker.unref()
    asked.resolve(crc)
  })
  // a thread that failed: what it was asked is checked here instead
  const fail = (): void => {
    if (thread === worker) thread = undefined
    for (const { resolve, bytes } of pending.values()) resolve(crc32(bytes))
    pending.clear()
  }
  worker.on('error', fail)
  worker.on('exit', fail)
  thread = worker
  return worker
}
