import { createHash, randomBytes } from 'node:crypto'
import { mkdir, open, readdir, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { chunkDocument } from './documents/chunking.js'
import type { DocumentInput } from './documents/input.js'

/**
 * Writes in progress, one file each under a folder of `DATA_DIR/journal/`, written (and synced) before the
 * write touches a store and removed when it ends, whether it succeeded or failed. A file left there means
 * the process died during that write (docs/scale-out-state.md, "A replica killed during a write").
 */
export class WriteJournal<E extends { namespace: string }> {
  constructor(private readonly dir: string) {}

  async begin(entry: E): Promise<string> {
    await mkdir(this.dir, { recursive: true })
    const name = `${Date.now().toString().padStart(15, '0')}-${randomBytes(4).toString('hex')}.json`
    const file = await open(join(this.dir, name), 'wx')
    try {
      await file.writeFile(JSON.stringify(entry))
      await file.sync()
    } finally {
      await file.close()
    }
    return name
  }

  async end(name: string): Promise<void> {
    await rm(join(this.dir, name), { force: true })
  }

  /** The writes a previous run of this process left unfinished, oldest first, with their file names. */
  async pending(): Promise<Array<{ name: string; entry: E }>> {
    const names = await readdir(this.dir).catch(() => [] as string[])
    const out: Array<{ name: string; entry: E }> = []
    for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
      try {
        out.push({ name, entry: JSON.parse(await readFile(join(this.dir, name), 'utf8')) as E })
      } catch {
        await this.end(name) // torn while being written: the write it announced never touched a store
      }
    }
    return out
  }
}

/** What the stores hold of one document, as the catalog read at start-up gives it: chunk id -> text. */
export type StoredChunks = (docId: string) => ReadonlyMap<string, string>

/**
 * What a namespace held of each document a write names when the write was announced: a fingerprint of its chunks
 * (ids and texts), or null where it held none. The journal keeps it, so that a restart can tell a document the
 * write never reached (still held as then) from one a later write changed (held otherwise).
 */
export type HeldBefore = Record<string, string | null>

export function fingerprintOf(held: ReadonlyMap<string, string>): string | null {
  if (held.size === 0) return null
  const hash = createHash('sha256')
  for (const id of [...held.keys()].sort()) hash.update(id).update('\0').update(held.get(id)!).update('\0')
  return hash.digest('hex')
}

export function heldBefore(docIds: readonly string[], stored: StoredChunks): HeldBefore {
  return Object.fromEntries(docIds.map((id) => [id, fingerprintOf(stored(id))]))
}

/** Whether a document is held now as it was when the write was announced (false when the entry does not say). */
const untouched = (id: string, stored: StoredChunks, before: HeldBefore | undefined): boolean =>
  before !== undefined && id in before && fingerprintOf(stored(id)) === before[id]

/**
 * The documents of an interrupted ingest to write again at the restart, so that the announced write ends complete:
 * those the stores hold as a mix (some chunk of the new version is stored but not exactly the new version: an old
 * tail the write had not yet deleted, or part of a write of several batches), and those still held exactly as when
 * the write was announced (the write never reached them, and no later write did either). A document holding exactly
 * the new version is complete; one a later write changed is left as that write left it. An entry written before
 * the journal kept `before` finishes only the mixed ones.
 */
export function unfinishedDocuments(documents: readonly DocumentInput[], stored: StoredChunks, before?: HeldBefore): DocumentInput[] {
  return documents.filter((doc) => {
    const held = stored(doc.id)
    const fresh = chunkDocument(doc)
    const whole = held.size === fresh.length && fresh.every((c) => held.get(c.id) === c.text)
    if (whole) return false
    const reached = fresh.some((c) => held.get(c.id) === c.text)
    return reached || untouched(doc.id, stored, before)
  })
}

/** The documents of an interrupted delete to delete at the restart: those still held as when it was announced. */
export function unfinishedDeletes(docIds: readonly string[], stored: StoredChunks, before?: HeldBefore): string[] {
  return docIds.filter((id) => before?.[id] != null && untouched(id, stored, before))
}
