import { spawn } from 'node:child_process'
import { OcrError } from './port.js'

export interface RunOptions {
  input?: Uint8Array
  timeoutMs: number
  /** Names the limit in the timeout's reason, e.g. `OCR_PAGE_TIMEOUT_MS`. */
  limitName: string
  signal?: AbortSignal
  env?: NodeJS.ProcessEnv
}

/**
 * Runs a command with `input` on its stdin and answers its stdout; killed (SIGKILL) past `timeoutMs` or on abort.
 * Fails with an {@link OcrError}: `timeout`, `aborted`, or `engine` when it cannot start or exits non-zero.
 */
export function runProcess(command: string, args: readonly string[], options: RunOptions): Promise<Buffer> {
  const { signal } = options
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new OcrError('aborted', 'recognition was cancelled'))
    const child = spawn(command, args, { env: options.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    let err = ''
    let ended: OcrError | undefined
    const stop = (why: OcrError) => {
      ended ??= why
      child.kill('SIGKILL')
    }
    const timer = setTimeout(() => stop(new OcrError('timeout', `${command} took over ${options.timeoutMs / 1000} s (${options.limitName}) and was stopped`)), options.timeoutMs)
    const onAbort = () => stop(new OcrError('aborted', 'recognition was cancelled'))
    signal?.addEventListener('abort', onAbort, { once: true })
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString('utf8')
    })
    child.stdin.on('error', () => {}) // a child that exits early closes its stdin; the exit below reports it
    child.on('error', (error) => stop(new OcrError('engine', `${command} cannot run: ${error.message}`)))
    child.on('close', (code) => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      if (ended) return reject(ended)
      if (code !== 0) return reject(new OcrError('engine', `${command} exited with ${code}: ${err.trim().split('\n').at(-1) ?? ''}`))
      resolve(Buffer.concat(out))
    })
    child.stdin.end(options.input)
  })
}
