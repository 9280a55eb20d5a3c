import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { FoldTask, FoldWritten } from './fold-thread.js'

// From source (tsx, vitest) a fold thread's entry is TypeScript and needs tsx's loader; from dist/ it is JavaScript.
const fromSource = import.meta.url.endsWith('.ts')

/** A store's fold-thread entry module `name` (without extension) in the folder of `base` (its `import.meta.url`). */
export function foldEntry(name: string, base: string): URL {
  return new URL(`./${name}${fromSource ? '.ts' : '.js'}`, base)
}

/** Runs one fold in a thread of its own (started for it, gone after) and answers the snapshot it wrote. */
export function foldInThread(entry: URL, task: FoldTask): Promise<FoldWritten> {
  const execArgv = fromSource ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href] : []
  const worker = new Worker(entry, { workerData: task, execArgv })
  return new Promise<FoldWritten>((resolve, reject) => {
    let answered = false
    worker.once('message', (written: FoldWritten) => {
      answered = true
      resolve(written)
    })
    worker.once('error', (error) => {
      answered = true
      reject(error)
    })
    worker.once('exit', (code) => {
      if (!answered) reject(new Error(`fold thread exited with code ${code} before it answered`))
    })
  })
}
