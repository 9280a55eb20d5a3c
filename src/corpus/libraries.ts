import { access } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { Embedder } from '../providers/embedder/port.js'
import type { LexicalIndexes } from '../providers/lexical-index/port.js'
import { checkNamespace, DEFAULT_NAMESPACE } from '../providers/namespace.js'
import type { VectorStore } from '../providers/vector-store/port.js'
import type { DocumentCatalogView, DocumentSummary } from './document-views.js'
import { checkpointFile } from './documents/catalog-checkpoint.js'
import { DocumentLibrary } from './documents/library.js'

export interface DocumentLibrariesPorts {
  vectors: VectorStore
  embedder: Embedder
  lexical: LexicalIndexes
}

/**
 * The document library of every namespace: one catalog and lexical index each over the shared chunk
 * collection. `open()` (at start-up) opens a library for every namespace the vector store holds chunks of
 * (with `lazy`, none: see the option); a write to another namespace opens one for it then. A read never opens one: a namespace without a
 * library holds no documents.
 */
export class DocumentLibraries implements DocumentCatalogView {
  private readonly libraries = new Map<string, DocumentLibrary>()
  private readonly opening = new Map<string, Promise<DocumentLibrary>>()

  constructor(
    private readonly ports: DocumentLibrariesPorts,
    private readonly options: {
      collection: string; embedBatchSize?: number
      /**
       * `open()` reads no namespace: each library opens on its namespace's first `refresh` (the shared catalog
       * calls it before every read and write of a namespace), so start-up does not grow with the corpus.
       */
      lazy?: boolean
      /**
       * The folder each namespace's catalog is kept in between runs (`DATA_DIR/catalog`, catalog-checkpoint.ts), read
       * at `open()` instead of a scroll of the vector store while the store's stamp is the one it was kept at, and
       * written by `checkpoint()`. None: every open scrolls.
       */
      checkpointDir?: string
    }
  ) {}

  /** Where each namespace's catalog came from at `open()`: `checkpoint`, or `scroll` with why the file was not used. */
  readonly openedFrom = new Map<string, string>()

  /**
   * Opens the library of every namespace holding chunks (the vector store is the source of truth), and
   * always `default`'s, which requests that name no namespace read.
   */
  async open(): Promise<void> {
    // Not redundant with each library's own call: it must come before `namespaces()`, whose Qdrant facet
    // needs the namespace payload index that it creates (old points were given to `default` by the step before).
    await this.ports.vectors.ensureCollection(this.options.collection, this.ports.embedder.dimensions)
    if (this.options.lazy) {
      // the lexical leg's settings are checked now (a mismatch stops the start-up), not at a namespace's first read
      await this.ports.lexical.open?.()
      return
    }
    const held = await this.ports.vectors.namespaces(this.options.collection)
    for (const namespace of [...new Set([DEFAULT_NAMESPACE, ...held])]) await this.openLibrary(namespace)
  }

  get collection(): string {
    return this.options.collection
  }

  /** Whether `open()` leaves each namespace to its first use. */
  get lazy(): boolean {
    return this.options.lazy === true
  }

  /** The namespace's library when it has one (it may be empty after deletes); never opens one. */
  get(namespace: string): DocumentLibrary | undefined {
    return this.libraries.get(namespace)
  }

  /** A namespace's documents in id order; none for a namespace without a library. */
  list(namespace: string): DocumentSummary[] {
    return this.libraries.get(namespace)?.list() ?? []
  }

  /** Up to `limit` documents of a namespace in id order, after the id `after` (from the first without it). */
  page(namespace: string, after: string | undefined, limit: number): DocumentSummary[] {
    return this.libraries.get(namespace)?.page(after, limit) ?? []
  }

  /** Namespaces that hold at least one document, ascending. */
  namespaces(): string[] {
    return [...this.libraries].filter(([, l]) => l.documentCount > 0).map(([ns]) => ns).sort()
  }

  /** Each namespace this process holds a library of, with its documents and chunks (an emptied one holds none). */
  sizes(): Array<{ namespace: string; documents: number; chunks: number }> {
    return [...this.libraries].map(([namespace, l]) => ({ namespace, documents: l.documentCount, chunks: l.chunkCount }))
  }

  get documentCount(): number {
    let n = 0
    for (const l of this.libraries.values()) n += l.documentCount
    return n
  }

  get chunkCount(): number {
    let n = 0
    for (const l of this.libraries.values()) n += l.chunkCount
    return n
  }

  /**
   * Reads a namespace's library again from the vector store (another replica wrote); opens one when the store
   * holds chunks of a namespace this process has no library for, and creates nothing for one it does not.
   */
  async refresh(namespace: string): Promise<void> {
    const known = this.libraries.get(checkNamespace(namespace))
    if (known) return known.refresh()
    if (this.opening.has(namespace)) {
      await this.opening.get(namespace)
      return
    }
    if ((await this.ports.vectors.count(this.options.collection, namespace)) > 0) await this.forWrite(namespace)
  }

  /** The namespace's library, opened first when it has none (for writes). */
  async forWrite(namespace: string): Promise<DocumentLibrary> {
    const known = this.libraries.get(checkNamespace(namespace))
    if (known) return known
    let opening = this.opening.get(namespace)
    if (!opening) {
      opening = this.openLibrary(namespace).finally(() => this.opening.delete(namespace))
      this.opening.set(namespace, opening)
    }
    return opening
  }

  /**
   * Keeps every library's catalog in its checkpoint file where the file does not hold it already (at a clean stop,
   * after the writes have landed, and in the background: `keepCheckpoints`); answers how many files it wrote.
   */
  async checkpoint(): Promise<number> {
    if (!(await this.#folderKept())) return 0
    let written = 0
    for (const library of this.libraries.values()) if (await library.checkpoint()) written += 1
    return written
  }

  #keeping: { timer: NodeJS.Timeout; seen: Map<string, number> } | undefined
  #stopped = false

  /**
   * Keeps the catalogs' checkpoint files up to date in the background, so that a stop has little or nothing left to
   * write: at once (a start-up that scrolled leaves its catalog in no file yet), then every `idleMs` each library that
   * no write changed during the whole interval before (idle after writes). A failure only costs the next start-up a
   * scroll. Ends with `stopKeeping()`.
   */
  keepCheckpoints(idleMs: number): void {
    if (!this.options.checkpointDir || this.#keeping || this.#stopped) return
    const seen = new Map<string, number>()
    const tick = () => {
      for (const [namespace, library] of this.libraries) {
        const idle = seen.get(namespace) === library.version
        seen.set(namespace, library.version)
        if (idle) void this.#checkpointOne(library)
      }
    }
    this.#keeping = { timer: setInterval(tick, idleMs).unref(), seen }
    void this.checkpoint().catch(() => undefined)
  }

  /** Ends `keepCheckpoints` (at a stop, before its own `checkpoint()`). */
  stopKeeping(): void {
    this.#stopped = true
    if (this.#keeping) clearInterval(this.#keeping.timer)
    this.#keeping = undefined
  }

  async #checkpointOne(library: DocumentLibrary): Promise<void> {
    if (await this.#folderKept()) await library.checkpoint().catch(() => undefined)
  }

  /** A DATA_DIR removed meanwhile (a test's folder, an operator's reset) is not made again for a checkpoint. */
  async #folderKept(): Promise<boolean> {
    const { checkpointDir } = this.options
    return checkpointDir !== undefined && access(dirname(checkpointDir)).then(() => true, () => false)
  }

  /** Opens the namespace's library (reading its chunks) and registers it. */
  private async openLibrary(namespace: string): Promise<DocumentLibrary> {
    const { collection, checkpointDir } = this.options
    const library = new DocumentLibrary(this.ports, {
      collection, namespace,
      ...(this.options.embedBatchSize ? { embedBatchSize: this.options.embedBatchSize } : {}),
      ...(checkpointDir ? { checkpointFile: checkpointFile(checkpointDir, collection, namespace) } : {})
    })
    this.openedFrom.set(namespace, await library.open())
    this.libraries.set(namespace, library)
    return library
  }
}
