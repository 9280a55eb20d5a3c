/**
 * Keeps each namespace's in-process document catalog (and lexical index) up to the shared stores when other
 * replicas write: the vector store is the source of truth, the hybrid index version (shared through the
 * generation store) says when to read it again, and the change log says which documents to read (or, from the write
 * window beside it, what they now are); when it cannot prove it is complete, the whole namespace is read. See docs/scale-out-state.md.
 */
import { formatVersion, parseVersion, type CatalogPosition, type DocumentChanges } from '../providers/generations/index.js'
import type { RefreshPhases, RefreshSources } from './documents/catch-up.js'
import type { DocumentLibraries } from './libraries.js'
import { refreshDocuments } from './appliers/writers/document-catch-up.js'

/** The change log as the catalog reads it (`Generations.documentChanges`). */
export interface ChangeLog {
  documentChanges(namespace: string, since: CatalogPosition | undefined, limit: number): Promise<DocumentChanges>
}

/**
 * The version each namespace's catalog was last read at, and its position in the change log: the shared catalog keeps
 * it, the lexical leg on Qdrant reads it (its local copy holds every change up to that version: docs/scale-out.md).
 */
export class CatalogVersions extends Map<string, { version: string | undefined; position?: CatalogPosition }> {
  /** The version the namespace's catalog (and the lexical index fed with it) was last read at; undefined when unknown. */
  versionOf(namespace: string): string | undefined {
    return this.get(namespace)?.version
  }
}

export interface SharedCatalogOptions {
  /** Where the versions read are kept (shared with the lexical leg); default a map of the catalog's own. */
  versions?: CatalogVersions
  /** With no version known (the generation store is down), read the stores again at most this often, in ms. Default 1,000. */
  unknownVersionRefreshMs?: number
  /** Where the changed documents are listed; without it every catch-up reads the whole namespace. */
  changes?: ChangeLog
  /** More changed documents than this since the copy was read: read the whole namespace instead. Default 2,000. */
  maxChangedDocuments?: number
  /** Told of each catch-up that read the stores: how, why that way, how long it took and where that went (metrics). */
  onCatchUp?: (kind: CatchUpKind, reason: CatchUpReason, ms: number, phases: CatchUpPhases) => void
  /** Told, per catch-up of changed documents, how many it applied from the write window and how many it read back (metrics). */
  onCatchUpSources?: (sources: RefreshSources) => void
}

/** How a catch-up brought a namespace up to date, for tests and benchmarks. */
export type CatchUpKind = 'documents' | 'namespace'
/**
 * Why it read what it read: `changes` (the log named the documents), `first-read` (no copy of the namespace yet),
 * `log-incomplete` (the log cannot prove it holds every change: trimmed, lost, another epoch, too many changes),
 * `log-unreadable` (no answer from the generation store), `no-version` (the request read no version).
 */
export type CatchUpReason = 'changes' | 'first-read' | 'log-incomplete' | 'log-unreadable' | 'no-version'

/**
 * Where a catch-up's time went, in ms: `log` reading the change log, then for a catch-up of the changed documents
 * the library's phases (`queued`, `store`, `lexical`: `RefreshPhases`). A whole-namespace read has only `log`.
 */
export type CatchUpPhases = RefreshPhases & { log?: number }

export class SharedCatalog {
  readonly #libraries: DocumentLibraries
  readonly #unknownRefreshMs: number
  readonly #changes: ChangeLog | undefined
  readonly #maxChanged: number
  readonly #onCatchUp: SharedCatalogOptions['onCatchUp']
  readonly #onSources: SharedCatalogOptions['onCatchUpSources']
  readonly #synced: CatalogVersions
  readonly #lastUnknown = new Map<string, number>()
  readonly #inFlight = new Map<string, Promise<void>>()
  /** The last catch-up of each namespace: which documents it read again (undefined: the whole namespace). */
  readonly lastCatchUp = new Map<string, { kind: CatchUpKind; documents?: number }>()
  /** Where the last catch-up of changed documents of each namespace took them from: the write window, or the vector store. */
  readonly lastSources = new Map<string, RefreshSources>()

  constructor(libraries: DocumentLibraries, options: SharedCatalogOptions = {}) {
    this.#libraries = libraries
    this.#synced = options.versions ?? new CatalogVersions()
    this.#unknownRefreshMs = options.unknownVersionRefreshMs ?? 1_000
    this.#changes = options.changes
    this.#maxChanged = options.maxChangedDocuments ?? 2_000
    this.#onCatchUp = options.onCatchUp
    this.#onSources = options.onCatchUpSources
  }

  /**
   * Resolves once the namespace's catalog was read from the stores at `version` (the hybrid version a
   * request read before this call) or later; at once when it already was. `undefined` (no version known)
   * reads the stores again when the last such read is older than `unknownVersionRefreshMs`.
   */
  async catchUp(namespace: string, version: string | undefined): Promise<void> {
    for (;;) {
      if (version !== undefined && this.#synced.get(namespace)?.version === version) return
      if (version === undefined && performance.now() - (this.#lastUnknown.get(namespace) ?? -Infinity) < this.#unknownRefreshMs) return
      const running = this.#inFlight.get(namespace)
      if (running) {
        await running
        // a refresh started before `version` was read may have missed its write: check again
        continue
      }
      const refresh = this.#refresh(namespace, version).finally(() => this.#inFlight.delete(namespace))
      this.#inFlight.set(namespace, refresh)
      await refresh
      return
    }
  }

  /**
   * Another replica recorded a hybrid write (the generation store's `follow`): a namespace this replica has read is
   * caught up now, in the background, so that the next read finds it done. A namespace never read here waits for
   * its first read; a version its copy already holds is ignored. A catch-up that fails is left to the next read.
   */
  written(namespace: string, version: string): void {
    const synced = this.#synced.get(namespace)
    if (!synced || synced.version === version) return
    const at = parseVersion(version)
    if (at && synced.position?.epoch === at.epoch && synced.position.generation >= at.generation) return
    this.catchUp(namespace, version).catch(() => {})
  }

  /** Whether no read of the namespace has finished here yet (its first read may be under way). */
  neverRead(namespace: string): boolean {
    return !this.#synced.has(namespace)
  }

  /** The version the namespace's catalog was last read at; undefined when unknown. */
  versionOf(namespace: string): string | undefined {
    return this.#synced.versionOf(namespace)
  }

  async #refresh(namespace: string, version: string | undefined): Promise<void> {
    const started = performance.now()
    const phases: CatchUpPhases = {}
    const reason = await this.#read(namespace, version, phases)
    this.#onCatchUp?.(reason === 'changes' ? 'documents' : 'namespace', reason, performance.now() - started, phases)
  }

  async #read(namespace: string, version: string | undefined, phases: CatchUpPhases): Promise<CatchUpReason> {
    if (version === undefined) {
      this.#lastUnknown.set(namespace, performance.now())
      await this.#readNamespace(namespace)
      this.#synced.set(namespace, { version })
      return 'no-version'
    }
    const since = this.#synced.get(namespace)?.position
    // The log is read before the vector store: every write it lists had reached the store by then, so what is
    // read next holds it (or a later write, which the log will list again).
    const asked = performance.now()
    const changes = await this.#changes?.documentChanges(namespace, since, this.#maxChanged).catch(() => undefined)
    if (this.#changes) phases.log = performance.now() - asked
    const reason: CatchUpReason = !since ? 'first-read' : !changes ? 'log-unreadable' : !changes.docIds ? 'log-incomplete' : 'changes'
    if (reason === 'changes') {
      const sources = await refreshDocuments(this.#libraries, namespace, changes!.docIds!, phases, changes!.window)
      this.lastCatchUp.set(namespace, { kind: 'documents', documents: changes!.docIds!.length })
      if (sources) {
        this.lastSources.set(namespace, sources)
        this.#onSources?.(sources)
      }
    } else {
      await this.#readNamespace(namespace)
    }
    // Without the log's answer, the version the request read is the position: the read came after it.
    const position = changes?.position
    this.#synced.set(namespace, position ? { version: formatVersion(position.epoch, position.generation), position } : { version })
    return reason
  }

  async #readNamespace(namespace: string): Promise<void> {
    await this.#libraries.refresh(namespace)
    this.lastCatchUp.set(namespace, { kind: 'namespace' })
  }
}
