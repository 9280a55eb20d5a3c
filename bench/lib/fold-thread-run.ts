import { Worker, type ResourceLimits } from 'node:worker_threads'

/** What one fold cost its thread: `bench/fold-memory.ts` and `bench/kg-fold-from-folder.ts` report it. */
export interface FoldThreadRun {
  /** The snapshot the thread wrote beside the store's. */
  file: string
  /** It ran out of the heap limit it was given, and was run again without one (as the store runs it). */
  ranOutOfHeap: boolean
  wallMs: number
  cpuMs: number
  /** Peaks over the run, sampled every 5 ms: the thread's heap used and committed, its external memory, and this process's resident growth. */
  peak: { used: number; committed: number; external: number; rss: number }
}

/**
 * Runs a store's fold-thread entry on `task` (its `workerData`) in a worker thread of this process, under
 * `resourceLimits` if given (and once more without them if it runs out, as `foldWithinLimit` does), sampling the
 * thread's heap (`worker.getHeapStatistics()`) and CPU (`worker.cpuUsage()`) every 5 ms.
 */
export async function runFoldThread(entry: URL, task: unknown, execArgv: string[], resourceLimits?: ResourceLimits): Promise<FoldThreadRun> {
  const rssBefore = process.memoryUsage().rss
  const t0 = performance.now()
  const peak = { used: 0, committed: 0, external: 0, rss: 0 }
  let cpu = { user: 0, system: 0 }
  const run = async (limited: ResourceLimits | undefined): Promise<{ file: string } | undefined> => {
    const limits = limited === undefined ? {} : { resourceLimits: limited }
    const thread = new Worker(entry, { workerData: task, execArgv, ...limits })
    const cpuBefore = { user: cpu.user, system: cpu.system }
    const sample = async () => {
      const stats = await thread.getHeapStatistics()
      peak.used = Math.max(peak.used, stats.used_heap_size)
      peak.committed = Math.max(peak.committed, stats.total_heap_size)
      peak.external = Math.max(peak.external, (stats as { external_memory?: number }).external_memory ?? 0)
      peak.rss = Math.max(peak.rss, process.memoryUsage().rss - rssBefore)
      const now = await thread.cpuUsage()
      cpu = { user: cpuBefore.user + now.user, system: cpuBefore.system + now.system }
    }
    const poll = setInterval(() => void sample().catch(() => undefined), 5)
    try {
      return await new Promise<{ file: string } | undefined>((resolve, reject) => {
        thread.once('message', (m: { file: string }) => {
          void sample().catch(() => undefined).finally(() => resolve(m))
        })
        thread.once('error', (error: NodeJS.ErrnoException) => (error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? resolve(undefined) : reject(error)))
      })
    } finally {
      clearInterval(poll)
    }
  }
  let written = await run(resourceLimits)
  const ranOutOfHeap = written === undefined
  written ??= await run(undefined)
  return { file: written!.file, ranOutOfHeap, wallMs: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000, peak }
}
