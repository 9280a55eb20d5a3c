/**
 * At most `size` holders at once across every process of the machine that names the same folder: slot `i` is an
 * exclusive `flock(2)` on the file `<dir>/slot-<i>`, held by a util-linux `flock` child process that runs `cat` on a
 * pipe from this process. The kernel drops a lock when its holder exits, so a slot is never left taken: a process that
 * dies (even by SIGKILL) closes the pipe, its `cat` ends, and the slot is free to the next waiter; no pid is read, so a
 * pid reused after a crash, or pids of other containers sharing the folder, cannot confuse it. Within the process a
 * {@link Slots} of the same size queues the holders first, so a process waits on at most `size` locks.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { Slots } from './slots.js'

/** Something that runs work within a bound (a {@link Slots} of one process, or {@link MachineSlots}). */
/** `flock`'s exit code for a lock held by another process (asked with `--conflict-exit-code`). */
const HELD = 75

export interface SlotBound {
  run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T>
}

export class MachineSlots implements SlotBound {
  private readonly local: Slots

  /** `dir` is created by {@link health} when missing. */
  constructor(private readonly dir: string, private readonly size: number, private readonly command = 'flock') {
    this.local = new Slots(size)
  }

  /**
   * Whether a slot can be locked here, and if not, why: the folder is made when missing, and `flock` (util-linux) must run
   * and open a slot file in it (a slot held by another process is fine).
   */
  async health(): Promise<{ ok: true } | { ok: false; reason: string }> {
    const why = (detail: string) => ({ ok: false as const, reason: `the OCR slots in ${this.dir} cannot be locked (OCR_SLOTS_DIR): ${detail}` })
    try {
      await mkdir(this.dir, { recursive: true })
    } catch (error) {
      return why((error as Error).message)
    }
    return new Promise((resolve) => {
      const child = spawn(this.command, ['--nonblock', '--conflict-exit-code', String(HELD), join(this.dir, 'slot-0'), 'true'], { stdio: ['ignore', 'ignore', 'pipe'] })
      let stderr = ''
      child.stderr!.on('data', (d: Buffer) => { stderr += d.toString() })
      child.once('error', (error) => resolve(why(`${this.command} (util-linux) cannot run: ${error.message}`)))
      child.once('close', (code) => resolve(code === 0 || code === HELD ? { ok: true } : why(stderr.trim() || `${this.command} exited with ${code}`)))
    })
  }

  run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.local.run(async () => {
      const lock = await this.take(signal)
      try {
        return await work()
      } finally {
        lock.release()
      }
    }, signal)
  }

  /**
   * One of the slot locks, waiting on all of them at once (each wait is the kernel's, no polling): the first granted is
   * kept, the other waits are ended (a wait granted meanwhile is released at once).
   */
  private take(signal?: AbortSignal): Promise<{ release(): void }> {
    signal?.throwIfAborted()
    return new Promise((resolve, reject) => {
      const holders = Array.from({ length: this.size }, (_, i) => this.lockHolder(join(this.dir, `slot-${i}`)))
      let settled = false
      const endAll = (keep?: ChildProcess) => {
        for (const h of holders) if (h.child !== keep) h.release()
      }
      const onAbort = () => {
        if (settled) return
        settled = true
        endAll()
        reject(signal!.reason)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      let failed = 0
      for (const holder of holders) {
        holder.granted.then(() => {
          if (settled) return holder.release()
          settled = true
          signal?.removeEventListener('abort', onAbort)
          endAll(holder.child)
          resolve(holder)
        }, (error: Error) => {
          if (settled || ++failed < holders.length) return
          settled = true
          signal?.removeEventListener('abort', onAbort)
          reject(error)
        })
      }
    })
  }

  /**
   * A `flock <file> cat` child: the lock is granted once `cat` runs, which it shows by echoing the byte written to its
   * stdin; ending its stdin ends `cat`, and with it the lock (or the wait, when killed before it was granted).
   */
  private lockHolder(file: string): { child: ChildProcess; granted: Promise<void>; release(): void } {
    const child = spawn(this.command, ['--exclusive', file, 'cat'], { stdio: ['pipe', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr!.on('data', (d: Buffer) => { stderr += d.toString() })
    const granted = new Promise<void>((resolve, reject) => {
      child.stdout!.once('data', () => resolve())
      child.once('error', (error) => reject(new Error(`${this.command} cannot run: ${error.message}`)))
      child.once('exit', (code, sig) => reject(new Error(`${this.command} ${file} ended (${code ?? sig}) before the lock was granted${stderr ? `: ${stderr.trim()}` : ''}`)))
    })
    granted.catch(() => undefined)
    child.stdin!.on('error', () => undefined)
    child.stdin!.write('x')
    let held = false
    granted.then(() => { held = true }, () => undefined)
    let released = false
    return {
      child, granted,
      release: () => {
        if (released) return
        released = true
        child.stdin!.end()
        // a wait not granted yet has no `cat` to end: the `flock` itself is stopped (were it granted meanwhile, its
        // `cat` still ends with its stdin)
        if (!held && child.exitCode === null) child.kill('SIGTERM')
      }
    }
  }
}
