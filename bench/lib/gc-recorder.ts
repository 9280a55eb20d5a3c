/**
 * Loaded into a recall process by a bench (`node --expose-gc --import tsx --import <this file> src/http/server.ts`):
 * keeps every garbage collection of the main thread (`perf_hooks` 'gc' entries: start, pause, kind) and, on SIGUSR2,
 * writes what it kept since the last SIGUSR2 and the memory now to `GC_RECORD_FILE` (through a temporary file and a
 * rename, with a sequence number the bench waits for). When `<GC_RECORD_FILE>.ask` holds `gc`, two full collections
 * run first (with `--expose-gc`) and the memory after them is written too; collections forced that way are not kept.
 * It imports nothing of recall, so a bench can load it into another checkout's process (`--base`).
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { constants, PerformanceObserver } from 'node:perf_hooks'
import { getHeapStatistics } from 'node:v8'

const file = process.env['GC_RECORD_FILE']
if (file) {
  const kinds: Record<number, string> = {
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
    [constants.NODE_PERFORMANCE_GC_MINOR_MARK_SWEEP]: 'minor-mark-sweep'
  }
  let pauses: { at_ms: number; ms: number; kind: string }[] = []
  let seq = 0
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const detail = (e as unknown as { detail?: { kind: number; flags: number } }).detail
      if (detail && (detail.flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) !== 0) continue
      pauses.push({ at_ms: Math.round(e.startTime), ms: Math.round(e.duration * 1000) / 1000, kind: kinds[detail?.kind ?? -1] ?? String(detail?.kind) })
    }
  }).observe({ entryTypes: ['gc'] })
  process.on('SIGUSR2', () => {
    // the observer hears of a collection after it: give the ones just made a turn to arrive
    setTimeout(() => {
      const kept = pauses
      pauses = []
      const memory: Record<string, unknown> = { now: process.memoryUsage() }
      let ask = ''
      try { ask = readFileSync(`${file}.ask`, 'utf8').trim() } catch { /* none: no collection asked for */ }
      const gc = (globalThis as { gc?: () => void }).gc
      if (ask === 'gc' && gc) {
        gc(); gc()
        memory.after_full_gc = process.memoryUsage()
        memory.heap_statistics = getHeapStatistics()
      }
      seq += 1
      writeFileSync(`${file}.tmp`, JSON.stringify({ seq, pid: process.pid, uptime_ms: Math.round(performance.now()), pauses: kept, memory }))
      renameSync(`${file}.tmp`, file)
    }, 50)
  })
}
