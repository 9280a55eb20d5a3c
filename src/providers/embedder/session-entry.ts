import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'

// From source (tsx, vitest) a session's entry is TypeScript and its thread or child needs tsx's loader; from dist/ it
// is plain JavaScript.
const fromSource = import.meta.url.endsWith('.ts')

/** The entry module `name` (without extension) beside this file, as the running build has it. */
export function sessionEntry(name: string): URL {
  return new URL(`./${name}${fromSource ? '.ts' : '.js'}`, import.meta.url)
}

/** The Node options a session's thread or child process starts with. */
export function sessionExecArgv(): string[] {
  if (!fromSource) return []
  return ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href]
}

/** A batch sent to a session, waiting for its vectors. */
export interface PendingRun {
  resolve: (vectors: Float32Array[]) => void
  reject: (error: Error) => void
}
