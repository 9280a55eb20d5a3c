import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Claim, SoleWriterRegistry, StoredRegistration, WriterIdentity } from './registry.js'


export interface DataDirSoleWriterRegistryOptions {
  /** `DATA_DIR`: the registration is the file `writer.json` in it. */
  dir: string
  /** How long a claim that replaced a stale registration waits before reading back who holds it, in ms. Default 100. */
  settleMs?: number
}

/**
 * The registration of the process that holds the embedded stores under a `DATA_DIR` (the server, or
 * `ingest --direct`), in the file `DATA_DIR/writer.json`. A registration is live while its heartbeat plus its lease
 * lies ahead and, on this host, while its process runs: a process killed on this host frees the `DATA_DIR` at once
 * (its pid is gone); one of another host (a container restarted under a new name) at the end of its lease.
 */
export class DataDirSoleWriterRegistry implements SoleWriterRegistry {
  readonly where: string
  readonly #dir: string
  readonly #file: string
  readonly #settleMs: number

  constructor(options: DataDirSoleWriterRegistryOptions) {
    this.#dir = options.dir
    this.#file = join(options.dir, 'writer.json')
    this.#settleMs = options.settleMs ?? 100
    this.where = `file ${this.#file}`
  }

  async claim(self: WriterIdentity, leaseMs: number): Promise<Claim> {
    await mkdir(this.#dir, { recursive: true })
    const current = await this.#read()
    if (current && current.instance !== self.instance && live(current)) return taken(current)
    const stored = JSON.stringify(registration(self, leaseMs))
    if (current?.instance === self.instance) {
      await this.#replace(stored)
      return { held: true }
    }
    if (!current) {
      // No registration: the first to create the file holds it.
      try {
        const file = await open(this.#file, 'wx')
        try { await file.writeFile(stored) } finally { await file.close() }
        return { held: true }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
        const winner = await this.#writtenBy()
        return winner && winner.instance !== self.instance ? taken(winner) : this.claim(self, leaseMs)
      }
    }
    // A stale registration: replaced; of claimants that replace it at once, the last rename holds it.
    await this.#replace(stored)
    await new Promise((resolve) => setTimeout(resolve, this.#settleMs))
    const after = await this.#read()
    if (after?.instance === self.instance) return { held: true }
    return after ? taken(after) : this.claim(self, leaseMs)
  }

  async release(self: WriterIdentity): Promise<void> {
    const current = await this.#read()
    if (current?.instance === self.instance) await rm(this.#file, { force: true })
  }

  async #replace(stored: string): Promise<void> {
    const temporary = `${this.#file}.${randomBytes(4).toString('hex')}`
    await writeFile(temporary, stored)
    await rename(temporary, this.#file)
  }

  /**
   * The registration another claimant has just created: it may still be empty between its `wx` open and its write, so
   * an unreadable file is read again for a moment before it counts as torn (then `claim` replaces it as stale).
   */
  async #writtenBy(): Promise<StoredRegistration | undefined> {
    for (let attempt = 0; ; attempt++) {
      const winner = await this.#read()
      if (!winner || winner.instance !== '' || attempt >= 20) return winner?.instance === '' ? undefined : winner
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }

  async #read(): Promise<StoredRegistration | undefined> {
    const text = await readFile(this.#file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined
      throw error
    })
    if (text === undefined) return undefined
    try {
      return JSON.parse(text) as StoredRegistration
    } catch {
      // torn by a crash while it was written (`wx` then write): no live registration
      return { instance: '', host: '', pid: 0, started_at: '', heartbeat_at: 0, lease_ms: 0 }
    }
  }
}

function registration(self: WriterIdentity, leaseMs: number): StoredRegistration {
  return { instance: self.instance, host: self.host, pid: self.pid, started_at: self.startedAt, heartbeat_at: Date.now(), lease_ms: leaseMs }
}

function live(stored: StoredRegistration): boolean {
  if (stored.heartbeat_at + stored.lease_ms <= Date.now()) return false
  return stored.host !== hostname() || running(stored.pid)
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM' // alive, another user's
  }
}

function taken(stored: StoredRegistration): Claim {
  const { instance, host, pid, started_at: startedAt } = stored
  return { held: false, holder: { instance, host, pid, startedAt }, endsInMs: Math.max(0, stored.heartbeat_at + stored.lease_ms - Date.now()) }
}
