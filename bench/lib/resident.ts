/**
 * Where a process's resident memory is (issue 44): the main isolate's heap as V8 sees it (used, committed, physical,
 * malloced, by space), every live worker thread's heap (`worker.getHeapStatistics()`), and the kernel's view
 * (`/proc/self/smaps_rollup`, and `/proc/self/smaps` summed by kind of mapping). `process.memoryUsage()` counts only
 * the main isolate; a thread's isolate, glibc's arenas and pages V8 keeps committed are resident too.
 *
 * Call `watchWorkers()` before the service starts any thread (it subscribes to node's `worker_threads` channel).
 */
import { subscribe } from 'node:diagnostics_channel'
import { readFile } from 'node:fs/promises'
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8'
import type { Worker } from 'node:worker_threads'

const MiB = 2 ** 20
const mib = (bytes: number) => Math.round((bytes / MiB) * 10) / 10

const live = new Set<Worker>()
let started = 0
let watching = false

/** Keeps every worker thread the process starts from now on, until it exits. */
export function watchWorkers(): void {
  if (watching) return
  watching = true
  subscribe('worker_threads', (message) => {
    const { worker } = message as { worker: Worker }
    started += 1
    live.add(worker)
    worker.once('exit', () => live.delete(worker))
  })
}

/** The main isolate as V8 counts it: used and committed heap, what V8 itself malloced, each space. */
function mainIsolate() {
  const h = getHeapStatistics()
  return {
    used_heap_mib: mib(h.used_heap_size),
    total_heap_mib: mib(h.total_heap_size),
    physical_heap_mib: mib(h.total_physical_size),
    malloced_mib: mib(h.malloced_memory),
    peak_malloced_mib: mib(h.peak_malloced_memory),
    external_mib: mib(h.external_memory),
    heap_limit_mib: mib(h.heap_size_limit),
    spaces: Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, { size_mib: mib(s.space_size), used_mib: mib(s.space_used_size), physical_mib: mib(s.physical_space_size) }]))
  }
}

/**
 * A worker's heap statistics, with the event loop held meanwhile: a thread the service unrefs while idle (the graph's,
 * `PortThread`) does not keep the process alive for the answer, and a bench awaiting only that answer would exit.
 */
async function heapOf(w: Worker): Promise<ReturnType<typeof getHeapStatistics>> {
  const held = setInterval(() => undefined, 1000)
  try {
    return await w.getHeapStatistics()
  } finally {
    clearInterval(held)
  }
}

/** Each live worker's heap (a thread that exits meanwhile is left out). */
async function workerIsolates() {
  const threads = await Promise.all([...live].map(async (w) => {
    try {
      const h = await heapOf(w)
      return { thread_id: w.threadId, used_heap_mib: mib(h.used_heap_size), total_heap_mib: mib(h.total_heap_size), physical_heap_mib: mib(h.total_physical_size), malloced_mib: mib(h.malloced_memory), external_mib: mib(h.external_memory), heap_limit_mib: mib(h.heap_size_limit) }
    } catch {
      return undefined
    }
  }))
  const known = threads.filter((t) => t !== undefined)
  return { started_since_watch: started, live: known.length, total_heap_mib: mib(known.reduce((s, t) => s + t.total_heap_mib * MiB, 0)), threads: known }
}

/**
 * What the live worker threads hold, heap in use and external memory summed (a store in a thread of its own,
 * `GRAPH_THREAD`: what dropping it frees is counted here, after the collection its thread runs on a drop).
 */
export async function threadsHeldBytes(): Promise<number> {
  const held = await Promise.all([...live].map(async (w) => {
    try {
      const h = await heapOf(w)
      return h.used_heap_size + h.external_memory
    } catch {
      return 0
    }
  }))
  return held.reduce((sum, bytes) => sum + bytes, 0)
}

/** `/proc/self/smaps_rollup`'s sizes (kB lines), in MiB. */
async function rollup(): Promise<Record<string, number>> {
  const text = await readFile('/proc/self/smaps_rollup', 'utf8')
  const fields: Record<string, number> = {}
  for (const line of text.split('\n')) {
    const m = /^(\w+):\s+(\d+) kB/.exec(line)
    if (m && ['Rss', 'Pss', 'Anonymous', 'Private_Dirty', 'Swap', 'AnonHugePages'].includes(m[1]!)) fields[`${m[1]!.toLowerCase()}_mib`] = mib(Number(m[2]) * 1024)
  }
  return fields
}

/**
 * The kind of one mapping. Anonymous ones by size: V8 allocates its heap pages one mapping each (256 KiB, 252 KiB of
 * them readable), glibc a thread's malloc arena as a 64 MiB-aligned heap of up to 64 MiB, threads' stacks 8 MiB;
 * WebAssembly memory is one reservation of many GiB.
 */
function kindOf(path: string, sizeKb: number, start: bigint): string {
  if (path === '[heap]') return 'brk heap (main malloc arena)'
  if (path.startsWith('[stack')) return 'main stack'
  if (path.startsWith('/')) return 'file-backed'
  if (path.startsWith('[')) return `special ${path}`
  if (path !== '') return `named ${path}`
  if (sizeKb >= 248 && sizeKb <= 256) return 'anonymous 248-256 KiB (V8 heap pages)'
  if (start % BigInt(64 * MiB) === 0n && sizeKb <= 65536) return 'anonymous at a 64 MiB boundary (glibc thread arenas)'
  if (sizeKb > 4 * 1024 * 1024) return 'anonymous over 4 GiB (WebAssembly memory, cages)'
  const bounds = [64, 248, 1024, 8192, 8196, 65536, 4 * 1024 * 1024]
  const names = ['under 64 KiB', '64-248 KiB', '256 KiB-1 MiB', '1-8 MiB', '8 MiB (thread stacks)', '8-64 MiB', '64 MiB-4 GiB']
  const at = bounds.findIndex((b) => sizeKb <= b)
  return `anonymous ${names[at === -1 ? names.length - 1 : at]}`
}

/** `/proc/self/smaps` summed by kind of mapping: count, mapped size and resident size; largest resident first. */
async function mappings(): Promise<Record<string, { count: number; size_mib: number; rss_mib: number }>> {
  const text = await readFile('/proc/self/smaps', 'utf8')
  const kinds = new Map<string, { count: number; size: number; rss: number }>()
  let current: { count: number; size: number; rss: number } | undefined
  let header: { path: string; start: bigint } | undefined
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line)
    if (m) {
      header = { path: m[3]!.trim(), start: BigInt(`0x${m[1]}`) }
      current = undefined
      continue
    }
    const size = /^Size:\s+(\d+) kB/.exec(line)
    if (size && header) {
      const kb = Number(size[1])
      const kind = kindOf(header.path, kb, header.start)
      current = kinds.get(kind) ?? { count: 0, size: 0, rss: 0 }
      kinds.set(kind, current)
      current.count += 1
      current.size += kb * 1024
      continue
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line)
    if (rss && current) current.rss += Number(rss[1]) * 1024
  }
  return Object.fromEntries([...kinds].sort((a, b) => b[1].rss - a[1].rss).map(([k, v]) => [k, { count: v.count, size_mib: mib(v.size), rss_mib: mib(v.rss) }]))
}

/**
 * Everything above at one moment (call it after the bench's full collections), and the V8 pages no live isolate
 * counts in its heap: pages V8 keeps in its page pool (a collection's freed pages, an exited thread's heap until a
 * task of another isolate frees them), or any isolate's left behind. Approximate: a thread's large objects are
 * counted in its heap, not in the pages.
 */
export async function residentAttribution() {
  // the service's threads are unref'd: without a handle of its own, the process could end while a thread answers
  const keepAlive = setInterval(() => {}, 1000)
  try {
    const main = mainIsolate()
    const workers = await workerIsolates()
    const kinds = await mappings()
    const v8Pages = kinds['anonymous 248-256 KiB (V8 heap pages)']?.rss_mib ?? 0
    // large objects have mappings of their own size, not pages
    const mainPaged = main.total_heap_mib - Object.entries(main.spaces).filter(([name]) => name.includes('large_object')).reduce((s, [, space]) => s + space.size_mib, 0)
    return {
      main_isolate: main, workers, smaps_rollup: await rollup(), mappings: kinds,
      v8_pages_in_no_live_heap_mib: Math.round((v8Pages - mainPaged - workers.total_heap_mib) * 10) / 10
    }
  } finally {
    clearInterval(keepAlive)
  }
}

type Attribution = Awaited<ReturnType<typeof residentAttribution>>

/**
 * Resident memory split into the kinds that hold it, in MiB, summing to the rollup's resident size: the main isolate's
 * heap by part (young generation, the old generation's spaces, large objects), worker threads' heaps, V8 pages no live
 * heap holds (the page pool), glibc's main arena (brk) and thread arenas, large anonymous mappings (the vector store's
 * WebAssembly memory, big array buffers malloc mapped on their own), mapped files, and the rest.
 */
function residentKinds(a: Attribution): Record<string, number> {
  const spaces = a.main_isolate.spaces
  const physical = (names: string[]) => names.reduce((s, n) => s + (spaces[n]?.physical_mib ?? 0), 0)
  const mapped = (kind: string) => a.mappings[kind]?.rss_mib ?? 0
  const kinds: Record<string, number> = {
    v8_main_young_generation: physical(['new_space', 'new_large_object_space']),
    v8_main_old_generation: physical(['old_space', 'code_space', 'trusted_space', 'read_only_space', 'shared_space', 'shared_trusted_space']),
    v8_main_large_objects: physical(['large_object_space', 'code_large_object_space', 'trusted_large_object_space', 'shared_large_object_space', 'shared_trusted_large_object_space']),
    v8_worker_heaps: a.workers.total_heap_mib,
    v8_page_pool: Math.max(0, a.v8_pages_in_no_live_heap_mib),
    glibc_main_arena: mapped('brk heap (main malloc arena)'),
    glibc_thread_arenas: mapped('anonymous at a 64 MiB boundary (glibc thread arenas)'),
    anonymous_over_64_mib: mapped('anonymous 64 MiB-4 GiB') + mapped('anonymous over 4 GiB (WebAssembly memory, cages)'),
    file_backed: mapped('file-backed')
  }
  const counted = Object.values(kinds).reduce((s, x) => s + x, 0)
  kinds['other'] = (a.smaps_rollup['rss_mib'] ?? 0) - counted
  return Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, Math.round(v * 10) / 10]))
}

/** `residentKinds` of a moment against the empty service's, in bytes a chunk, and the whole in MiB. */
export function residentBreakdown(now: Attribution, empty: Attribution, chunks: number) {
  const at = residentKinds(now)
  const before = residentKinds(empty)
  return {
    mib: at,
    bytes_per_chunk_over_empty: Object.fromEntries(Object.keys(at).map((k) => [k, Math.round(((at[k]! - before[k]!) * MiB) / chunks)])),
    resident_mib: now.smaps_rollup['rss_mib'],
    resident_bytes_per_chunk_over_empty: Math.round((((now.smaps_rollup['rss_mib'] ?? 0) - (empty.smaps_rollup['rss_mib'] ?? 0)) * MiB) / chunks)
  }
}
