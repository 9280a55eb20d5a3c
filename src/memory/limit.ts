/**
 * `MEMORY_LIMIT`: how much resident memory the service process may hold, as the operator writes it (bytes, or a number
 * with a unit), or what the machine gives it when unset; and the V8 heap limit the start script sets from it.
 */
import { readFileSync } from 'node:fs'
import { totalmem } from 'node:os'

const UNITS: Readonly<Record<string, number>> = {
  '': 1, b: 1,
  kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12,
  k: 2 ** 10, kib: 2 ** 10, m: 2 ** 20, mib: 2 ** 20, g: 2 ** 30, gib: 2 ** 30, t: 2 ** 40, tib: 2 ** 40
}

/** What `MEMORY_LIMIT` accepts: `805306368`, `768MiB`, `6GiB`, `1.5GB`, `6g` (k/m/g/t alone are binary, as in Docker). */
export const MEMORY_LIMIT_PATTERN = '^\\s*[0-9]+(\\.[0-9]+)?\\s*([kKmMgGtT]([iI]?[bB])?|[bB])?\\s*$'

/** Bytes of a `MEMORY_LIMIT` value; undefined when it is not one. */
export function parseMemoryLimit(text: string): number | undefined {
  const match = /^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$/.exec(text)
  if (!match) return undefined
  const unit = UNITS[match[2]!.toLowerCase()]
  if (unit === undefined) return undefined
  const bytes = Math.floor(Number(match[1]) * unit)
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : undefined
}

/** Bytes in the binary unit a person reads best: `512.0 MiB`, `6.00 GiB`. */
export function formatBytes(bytes: number): string {
  if (bytes >= 2 ** 30) return `${(bytes / 2 ** 30).toFixed(2)} GiB`
  if (bytes >= 2 ** 20) return `${(bytes / 2 ** 20).toFixed(1)} MiB`
  return `${bytes} bytes`
}

/** The memory limit of this process's cgroup (v2, then v1), when one is set below the machine's memory. */
function cgroupLimit(): number | undefined {
  for (const file of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    try {
      const text = readFileSync(file, 'utf8').trim()
      if (/^\d+$/.test(text) && Number(text) < totalmem()) return Number(text)
    } catch { /* not this cgroup version */ }
  }
  return undefined
}

/** Share of an unconfined machine's memory the service takes when `MEMORY_LIMIT` is unset: the rest is for the embedding session processes, the OS and its file cache. */
const MACHINE_SHARE = 0.75

export interface MemoryLimit {
  bytes: number
  /** `MEMORY_LIMIT`, the container's cgroup limit, or a share of the machine's memory. */
  source: 'MEMORY_LIMIT' | 'cgroup' | 'machine'
}

/** The limit the service keeps to: `MEMORY_LIMIT` when set, else the cgroup's limit, else `MACHINE_SHARE` of the machine. */
export function memoryLimit(configured: number | undefined): MemoryLimit {
  if (configured !== undefined) return { bytes: configured, source: 'MEMORY_LIMIT' }
  const cgroup = cgroupLimit()
  if (cgroup !== undefined) return { bytes: cgroup, source: 'cgroup' }
  return { bytes: Math.floor(totalmem() * MACHINE_SHARE), source: 'machine' }
}

/**
 * Share of the limit given to V8's old space: the rest is memory outside the JavaScript heap (the vector store's
 * matrices and other typed arrays, the in-process ONNX session, the lexical worker threads' own heaps).
 */
const HEAP_SHARE = 0.75
/** No heap below this, whatever the limit: the service with its model does not start in less. */
const MIN_HEAP_BYTES = 256 * 2 ** 20

/** `--max-old-space-size` (MiB) for a limit. */
export function heapMegabytesFor(limitBytes: number): number {
  return Math.floor(Math.max(MIN_HEAP_BYTES, limitBytes * HEAP_SHARE) / 2 ** 20)
}

/**
 * V8's heap growing factor, fixed at 1.5 (`--heap-growing-percent=50`). Left to itself V8 lets the heap grow up to 4x
 * what the last full collection kept before it collects again, and the pages a collection frees stay in its page pool,
 * resident, until the process is idle: an ingesting process held its peak heap, 2.5 times its live heap at 30k chunks
 * and 4 at 100k (bench/results/memory.log.md, "The resident gap").
 */
export const HEAP_GROWING_PERCENT = 50

/**
 * Memory outside the heap (array buffers: a snapshot file read whole, the vector store's rows, the graphs' columns)
 * counted in the heap's own limit, which grows with the heap. Without it V8 set off a full collection each time such
 * memory had grown by a margin of its own: a 1M-chunk start-up, reading gigabytes of files into buffers, ran 72 full
 * collections, most with the heap standing still (~800 MiB, one every 0.5-0.8 s), 21 with it (start-up 89 → 74 s,
 * resident after it the same). The price: buffers no longer used wait for a later collection, so an ingest held 5-11%
 * more resident (at 100k-300k chunks, for 0.93x its CPU; bench/results/memory.log.md, "External memory in the heap's
 * limit").
 */
const EXTERNAL_MEMORY_IN_HEAP_LIMIT = '--external-memory-accounted-in-global-limit'

/** The node options that size V8's heap for a limit, as `scripts/start.sh` passes them (src/memory/heap-flag.ts). */
export function heapFlagsFor(limitBytes: number): string[] {
  return [`--max-old-space-size=${heapMegabytesFor(limitBytes)}`, `--heap-growing-percent=${HEAP_GROWING_PERCENT}`, EXTERNAL_MEMORY_IN_HEAP_LIMIT]
}
