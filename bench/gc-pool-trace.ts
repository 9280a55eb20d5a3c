/**
 * V8's page pool over a run, from `node --trace-gc-nvp` (issue 44, the resident gap): reads the trace on stdin and
 * prints one line per isolate each time its pool changes (`pool_local_chunks` are pages of 256 KiB a collection freed
 * and V8 keeps, resident, for the isolate's reuse; `pool_shared_chunks` an exited thread's, freed 8 s later), then each
 * isolate's peak pool and peak heap + pool.
 *
 *   node --expose-gc --trace-gc-nvp --max-old-space-size=16384 --import tsx bench/memory.ts --chunks 30000 \
 *     | npx tsx bench/gc-pool-trace.ts > pool.txt
 */
import { createInterface } from 'node:readline'

const LINE = /^\[\d+:(0x[0-9a-f]+):(\d+)\]\s+(\d+) ms: .*?gc=(\w+).*?end_memory_size=(\d+).*?pool_local_chunks=(\d+) pool_shared_chunks=(\d+) pool_total_chunks=(\d+)/
const MiB = 2 ** 20
const PAGE_MIB = 0.25

const last = new Map<string, string>()
const peaks = new Map<string, { thread: string; pool_chunks: number; heap_and_pool_mib: number; collections: number }>()
for await (const line of createInterface({ input: process.stdin })) {
  const m = LINE.exec(line)
  if (!m) continue
  const [, isolate, thread, ms, gc, endMemory, local, shared, total] = m as unknown as string[]
  const heapMib = Math.round(Number(endMemory) / MiB)
  const peak = peaks.get(isolate!) ?? { thread: thread!, pool_chunks: 0, heap_and_pool_mib: 0, collections: 0 }
  peak.collections += 1
  peak.pool_chunks = Math.max(peak.pool_chunks, Number(total))
  peak.heap_and_pool_mib = Math.max(peak.heap_and_pool_mib, Math.round(heapMib + Number(total) * PAGE_MIB))
  peaks.set(isolate!, peak)
  const state = `${local} ${shared} ${total}`
  if (last.get(isolate!) === state) continue
  last.set(isolate!, state)
  console.log(`thread ${thread} ${isolate} ${ms} ms gc=${gc} heap ${heapMib} MiB pool local ${local} shared ${shared} total ${total} (${Number(total) * PAGE_MIB} MiB)`)
}
console.log(JSON.stringify({ peaks_by_isolate: Object.fromEntries(peaks) }, null, 2))
