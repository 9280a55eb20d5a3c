import { join } from 'node:path'
import type { Generations } from '../generations.js'
import type { Embedder } from '../providers/embedder/port.js'
import { checkNamespace } from '../providers/namespace.js'
import type { DerivationOptions } from '../derive/options.js'
import { contributionsOf, documentIdsOf } from './derived-graph.js'
import { forgetDerived } from './derived-contribution.js'
import type { LlmExtractionStats, LlmExtractor } from './llm-extraction/extractor.js'
import { chunksOf, withLlmExtraction } from './llm-extraction/contributions.js'
import { replaceDerivedEpisodes, type DerivedEpisodesReport } from './appliers/writers/derived-episodes.js'
import { DERIVED_COLLECTION_PREFIX } from '../providers/episodic-graph/collections.js'
import { DEFAULT_DERIVATION_OPTIONS } from '../derive/options.js'
import { ConversationIngestError } from './conversations/body.js'
import { entityIdsOf } from './graph.js'
import type { EpisodeDerivationOptions } from '../derive/episodes.js'
import type { ChunkRecord } from '../kernel/chunk-payload.js'
import { changedDocuments, fromLegacyEntry, recordedKinds, type Change, type ChangeKind, type LegacyEntry, type LockKind, type ResultOf, type WriteEntry } from './changes.js'
import { applyDocuments } from './appliers/documents.js'
import { applyImages } from './appliers/images.js'
import type { ImagesReport } from './images/images-report.js'
import { IMAGES_COLLECTION } from './images/image-records.js'
import { DEFAULT_PICTURE_LIMITS } from './images/pictures.js'
import { applyEpisodes } from './appliers/episodes.js'
import { applyGraph } from './appliers/graph.js'
import { applyNamespaceDrop } from './appliers/namespace.js'
import { applyReembed } from './appliers/reembed.js'
import { collectionsOf } from './model-stores.js'
import { applyEntityNames } from './appliers/entity-names.js'
import { BackgroundRuns } from './background-runs.js'
import { EntityNameLedger } from './entity-name-ledger.js'
import type { KgContribution, KgDerivedWriteResult } from '../providers/knowledge-graph/port.js'
import { entityCollectionOf, EntityNameFailures, type EntityVectorStatus } from './entity-vectors.js'
import { ProviderError } from '../providers/errors.js'
import { EpisodeIngestError } from './episodes/validation.js'
import { listNamespaces, type NamespaceStores } from './namespaces.js'
import type { NamespaceModels } from './namespace-models.js'
import { forgetModel, recordModel } from './appliers/writers/namespace-models.js'
import type { MemoryBudget } from '../memory/budget.js'
import { applyConversations } from './appliers/conversations.js'
import { applyRebuild } from './appliers/rebuild.js'
import { applyLegacyPoints } from './appliers/legacy-points.js'
import { heldBefore, unfinishedDeletes, unfinishedDocuments, WriteJournal, type HeldBefore } from './write-journal.js'
import { exclusiveOf, type Exclusive, type WriteLock } from './write-lock.js'
import { derivationInputOf, DerivationRecords, type DerivationRecord, type DerivedChannel } from './index-status/records.js'
import { DerivationRecordWriter } from './appliers/writers/derivation-records.js'
import { IndexStatus } from './index-status/index-status.js'
import { derivedChannel, lexicalChannel, vectorsChannel } from './index-status/providers.js'
import { derivedEpisodeItems, derivedGraphItems } from './index-status/derived-items.js'
import type { DocumentLibraryView } from './document-views.js'
import { fingerprintOf } from './write-journal.js'
import { keepStates, windowDraft, type WindowDraft } from './write-window.js'

/** The stores and services a write reaches: a namespace's stores, the embedder and the generations. */
export interface WritePathPorts extends NamespaceStores {
  /** The embedder passages are embedded with (the cached one, when the cache is on). */
  embedder: Embedder
  generations: Generations
}

export interface WritePathOptions {
  lock: WriteLock
  /**
   * `DATA_DIR/journal/`, where the stores need a journal (over Qdrant a write is several store calls; the embedded
   * stores' durable logs are their own): each document and Episode write is announced there before it touches a
   * store, and a restart finishes what a killed process left (`recover`).
   */
  journalDir?: string
  /**
   * With options, every documents write also replaces the written documents' contributions to the namespace's derived
   * knowledge graph (docs/derivation.md), under the `graph:` lock, and moves graphrag's version too. Without, none.
   */
  derivation?: DerivationOptions
  /** Called right after a write is announced in the journal: the crash tests kill the process there (`FAILPOINTS`). */
  afterJournal?: () => void
  /** Called right after an entity-names write is announced in the journal, before it runs (`FAILPOINTS=after-entity-journal`). */
  afterEntityJournal?: () => void
  /** With derivation: an LLM's extraction joins each document's contribution (docs/llm-extraction.md). Without, none. */
  llm?: LlmExtractor
  /**
   * With options, every documents write also replaces the written documents' derived Episodes (docs/derivation.md,
   * "Derived Episodes"), under the `episodes:` lock, and moves episodic's version when they changed.
   */
  episodeDerivation?: { derivation: DerivationOptions; episodes: EpisodeDerivationOptions }
  /**
   * With it, a write that embeds or deletes vectors is refused (409) when the namespace's vectors were made with another
   * model, a write that embedded records the model, and a drop forgets it (src/corpus/namespace-models.ts).
   */
  namespaceModels?: NamespaceModels
  /**
   * With a budget, a write that adds (an upsert of any kind) is refused with 507 before it touches anything once the
   * process's memory is nearly spent (src/memory/budget.ts); deletes and drops, which make room, are always taken.
   */
  budget?: Pick<MemoryBudget, 'assertRoom' | 'writeBegins'>
  /**
   * With it, every write that changes a knowledge graph (a graph write, a derivation that changed it, a namespace drop)
   * is followed, after it answered, by the entity-names write (docs/derivation.md, "Entities found by meaning"),
   * journalled before the answer; `failures` keeps what its last run could not do, for the status.
   */
  entityNames?: { failures: EntityNameFailures; status: EntityVectorStatus }
}

export interface WriteOptions {
  /** How many chunks of a document upsert are embedded so far. */
  onProgress?: (embedded: number, total: number) => void
  /** The entity-names write stops between batches once it aborts (the service closing). */
  signal?: AbortSignal
}

/** What a documents write contributed to the derived graph (docs/derivation.md). */
export interface DerivedGraphReport {
  /** Entities and relations the written documents contribute now, each counted once per document. */
  entities: number
  relations: number
  /** Derived ids left out because an imported entity or relation holds them. */
  blocked: number
  /** With `LLM_EXTRACTION=true`: the written documents' chunks the LLM extracted, and what it took. */
  llm?: LlmExtractionStats
}

/** The derived graph's part (with `DERIVED_GRAPH`) and the derived Episodes' part (with `DERIVED_EPISODES`). */
export type DerivedReport = Partial<DerivedGraphReport> & Partial<DerivedEpisodesReport>

export type Written<C extends Change> = ResultOf<C> & { generation?: number; derived?: DerivedReport }

/** A documents upsert whose every document the namespace held already as sent, or gave no text (skipped). */
function changedNothing(change: Change, result: object): boolean {
  if (change.kind === 'legacy-points') return (result as { adopted: number }).adopted === 0
  if (change.kind !== 'documents' || change.op !== 'upsert') return false
  const { unchanged = 0, skipped = [], images } = result as { unchanged?: number; skipped?: unknown[]; images?: ImagesReport }
  return unchanged + skipped.length === change.documents.length && (images?.written ?? 0) + (images?.removed ?? 0) === 0
}

/** A rebuild of a channel this service does not build (400). */
export class RebuildRefusedError extends Error {}

/** Kinds whose writes are journalled: several store calls that a crash could leave half-done. */
const JOURNALLED: ReadonlySet<ChangeKind> = new Set(['documents', 'episodes', 'conversations', 'model', 'rebuild', 'legacy-points'])

/**
 * The one way anything changes a namespace: `write(namespace, change)` catches this replica up (documents), takes the
 * write lock of the namespace and kind around each store part, announces the write in the journal, applies it, and
 * records it (generation, change log, cache versions, the lexical statistics stamp, which follows the hybrid
 * version), also after a failure half-way; it answers with the generation reached. A new kind of write is one
 * more case of `apply`.
 */
export class WritePath {
  readonly #ports: WritePathPorts
  readonly #lock: WriteLock
  readonly #journal: WriteJournal<WriteEntry> | undefined
  /** The entity-names writes asked for and not done, apart (`journal/entities/`): they end in the background, after their callers' answers. */
  readonly #entityJournal: WriteJournal<WriteEntry> | undefined
  readonly #afterEntityJournal: (() => void) | undefined
  readonly #legacyJournals: ReadonlyArray<WriteJournal<LegacyEntry>>
  readonly #derivation: DerivationOptions | undefined
  readonly #afterJournal: (() => void) | undefined
  readonly #llm: LlmExtractor | undefined
  readonly #episodeDerivation: WritePathOptions['episodeDerivation']
  readonly #models: NamespaceModels | undefined
  readonly #budget: WritePathOptions['budget']
  readonly #records: DerivationRecordWriter
  /** Each document's status in every channel (docs/api.md, "Index status"), from the stores and the derivation records. */
  readonly status: IndexStatus
  readonly #entityNames: WritePathOptions['entityNames']
  readonly #entityRuns: BackgroundRuns
  /** Per namespace, the journal entry of the entity-names write asked for and not yet done (one covers a burst). */
  readonly #entityEntries = new Map<string, string>()
  /**
   * What the entity-names write knows of each namespace's names between runs, so that a run reads only the entities
   * written since: over the embedded graph only, which no other process writes.
   */
  readonly #entityLedger: EntityNameLedger | undefined

  constructor(ports: WritePathPorts, options: WritePathOptions) {
    this.#ports = ports
    this.#lock = options.lock
    this.#derivation = options.derivation
    this.#afterJournal = options.afterJournal
    this.#llm = options.llm
    this.#episodeDerivation = options.episodeDerivation
    this.#models = options.namespaceModels
    this.#budget = options.budget
    this.#entityNames = options.entityNames
    this.#entityLedger = options.entityNames && ports.graph.backend === 'memory' ? new EntityNameLedger() : undefined
    this.#entityRuns = new BackgroundRuns((namespace, signal) => this.#syncEntityNames(namespace, signal))
    this.#journal = options.journalDir ? new WriteJournal<WriteEntry>(join(options.journalDir, 'writes')) : undefined
    this.#entityJournal = options.journalDir ? new WriteJournal<WriteEntry>(join(options.journalDir, 'entities')) : undefined
    this.#afterEntityJournal = options.afterEntityJournal
    this.#legacyJournals = options.journalDir
      ? ['documents', 'episodes'].map((kind) => new WriteJournal<LegacyEntry>(join(options.journalDir!, kind)))
      : []
    const recordsCollection = `${ports.config.collectionPrefix}derivation_status`
    this.#records = new DerivationRecordWriter(ports.vectors, recordsCollection)
    const records = new DerivationRecords(ports.vectors, recordsCollection)
    const episodeOptions = options.episodeDerivation?.episodes
    this.status = new IndexStatus([
      vectorsChannel(ports.vectors),
      lexicalChannel((namespace) => ports.documents.get(namespace)!.lexical),
      derivedChannel('derived_graph', {
        records, items: (namespace, docIds) => derivedGraphItems(ports.graph, namespace, docIds),
        ...(options.derivation ? {} : { off: 'this service derives no knowledge graph: DERIVED_GRAPH=false, or REPLICAS>1 without GRAPH_BACKEND=neo4j (docs/derivation.md)' })
      }),
      derivedChannel('derived_episodes', {
        records,
        items: (namespace, docIds) => episodeOptions ? derivedEpisodeItems(ports.episodes, namespace, docIds, episodeOptions) : Promise.resolve(new Map()),
        ...(episodeOptions ? {} : { off: 'this service derives no Episodes: DERIVED_EPISODES=false, or REPLICAS>1 without GRAPH_BACKEND=neo4j (docs/derivation.md)' })
      })
    ], { catchUp: (namespace) => ports.catchUpDocuments(namespace), get: (namespace) => ports.documents.get(namespace) })
  }

  /** Whether writes are journalled (over Qdrant). */
  get journalled(): boolean {
    return this.#journal !== undefined
  }

  async write<C extends Change>(namespace: string, change: C, options: WriteOptions = {}): Promise<Written<C>> {
    checkNamespace(namespace)
    if (change.kind === 'rebuild') {
      const settings = { derived_graph: this.#derivation ? undefined : 'DERIVED_GRAPH', derived_episodes: this.#episodeDerivation ? undefined : 'DERIVED_EPISODES', entity_vectors: this.#entityNames ? undefined : 'ENTITY_VECTORS' }
      const off = change.channels.filter((c): c is keyof typeof settings => c in settings && settings[c as keyof typeof settings] !== undefined)
      if (off.length > 0) throw new RebuildRefusedError(`channels: ${off.map((c) => `"${c}"`).join(', ')} ${off.length > 1 ? 'are' : 'is'} off in this service, nothing builds ${off.length > 1 ? 'them' : 'it'} (${off.map((c) => settings[c]).join(', ')}; docs/derivation.md)`)
    }
    const adds = 'op' in change && change.op === 'upsert'
    if (this.#budget && adds) await this.#budget.assertRoom(() => listNamespaces(this.#ports))
    // a graph write embeds nothing and reads no vector; a drop removes every model's vectors; a re-embed moves them
    // (legacy points predate the model records: what they were embedded with is unknown)
    if (change.kind !== 'graph' && change.kind !== 'namespace' && change.kind !== 'model' && change.kind !== 'legacy-points') await this.#models?.check(namespace)
    let written: Written<C>
    const ended = adds ? this.#budget?.writeBegins() : undefined
    try {
      written = await this.#write(namespace, change, options)
    } finally {
      ended?.()
      // also after a failure half-way: the graph may have changed
      if (change.kind === 'graph' || change.kind === 'namespace') {
        if (change.kind === 'namespace') this.#entityLedger?.forget(namespace)
        else this.#entityLedger?.touch(namespace, change.op === 'delete' ? change.ids : entityIdsOf(change.body))
        await this.#askEntityNames(namespace)
      }
    }
    const models = this.#models
    if (models && change.kind === 'namespace') await forgetModel(models, namespace)
    else if (change.kind === 'model') await this.#recordModel(namespace)
    else if (models && change.kind !== 'graph' && change.kind !== 'namespace' && change.kind !== 'entities' && change.op === 'upsert') await recordModel(models, namespace)
    return written
  }

  /** After a re-embed: the namespace is the running model's when it holds anything of it now. */
  async #recordModel(namespace: string): Promise<void> {
    if (!this.#models) return
    const { vectors, config } = this.#ports
    if ((await Promise.all(collectionsOf(config).map((c) => vectors.count(c, namespace)))).some((n) => n > 0)) await recordModel(this.#models, namespace)
  }

  /**
   * Asks for the entity-names write of a namespace whose graph changed: announced in the journal now (before the write
   * that asked answers, so that a crash leaves it to `recover`), run in the background.
   */
  async #askEntityNames(namespace: string): Promise<void> {
    if (!this.#entityNames) return
    if (this.#entityJournal && !this.#entityEntries.has(namespace)) {
      this.#entityEntries.set(namespace, await this.#entityJournal.begin({ namespace, change: { kind: 'entities', op: 'sync' } }))
      this.#afterEntityJournal?.()
    }
    this.#entityRuns.schedule(namespace)
  }

  /** One run: applied, recorded when it changed the collection; its journal entry ends only when it succeeded. */
  async #syncEntityNames(namespace: string, signal: AbortSignal): Promise<void> {
    const entry = this.#entityEntries.get(namespace)
    const change = { kind: 'entities', op: 'sync' } as const
    const result = await this.#applyAny(namespace, change, { signal }) as ResultOf<typeof change>
    if (result.embedded + result.removed > 0) await this.#ports.generations.recordWrite(namespace, recordedKinds(change))
    if (entry !== undefined && this.#entityEntries.get(namespace) === entry) {
      this.#entityEntries.delete(namespace)
      await this.#entityJournal!.end(entry)
    }
  }

  /**
   * A rebuild's `entity_vectors`: the namespace's entity-names write asked for as after a graph write, and waited on;
   * the names of the documents' entities held now, per document. A run that failed is this write's failure.
   */
  async #resyncEntityNames(namespace: string, docIds: readonly string[], entityNames: NonNullable<WritePathOptions['entityNames']>): Promise<Map<string, number>> {
    // a repair: the whole namespace read again
    this.#entityLedger?.forget(namespace)
    await this.#askEntityNames(namespace)
    await this.#entityRuns.settled(namespace)
    const failed = entityNames.failures.of(namespace)
    if (failed) throw new ProviderError('entity-names', `${failed.texts.size} entity name(s) could not be embedded: ${failed.reason}`)
    const counts = await entityNames.status.documents(namespace, docIds)
    return new Map([...counts].map(([docId, c]) => [docId, c.done]))
  }

  /** Resolves once no entity-names write is under way or asked for. */
  entityNamesIdle(): Promise<void> {
    return this.#entityRuns.idle()
  }

  /** Stops the entity-names writes (before the stores close): a run under way ends after its batch, its journal entry kept. */
  close(): Promise<void> {
    return this.#entityRuns.stop()
  }

  /**
   * At start-up: the entity-names writes a killed run left in the journal are asked for again; without a journal (the
   * embedded stores), every namespace with a graph is asked for (a run that finds nothing to do writes nothing).
   * How many were asked for.
   */
  async resumeEntityNames(namespaces: () => Promise<string[]>): Promise<number> {
    if (!this.#entityNames) return 0
    if (!this.#entityJournal) {
      const all = await namespaces()
      for (const namespace of all) await this.#askEntityNames(namespace)
      return all.length
    }
    let asked = 0
    for (const { name, entry } of await this.#entityJournal.pending()) {
      if (this.#entityEntries.has(entry.namespace)) await this.#entityJournal.end(name)
      else this.#entityEntries.set(entry.namespace, name)
      this.#entityRuns.schedule(entry.namespace)
      asked += 1
    }
    return asked
  }

  async #write<C extends Change>(namespace: string, change: C, options: WriteOptions): Promise<Written<C>> {
    if (change.kind === 'documents' || change.kind === 'namespace' || change.kind === 'model' || change.kind === 'rebuild') await this.#ports.catchUpDocuments(namespace)
    // what the written documents now are, for the write window beside the change log (docs/scale-out-state.md)
    const draft = change.kind === 'documents' ? windowDraft() : undefined
    if ((!this.#derivation && !this.#episodeDerivation) || change.kind !== 'documents') {
      return this.#recorded(namespace, change, () => this.#journalled(namespace, change, () => this.#apply(namespace, change, options, draft)), draft)
    }
    // A write that derives records its documents part as soon as it is applied (other replicas see the documents while
    // the derived part runs), then derives within the same journal entry, so that a replayed entry derives again.
    return this.#journalled(namespace, change, async () => {
      const written = await this.#recorded(namespace, change, () => this.#apply(namespace, change, options, draft), draft)
      const { graph, episodes } = await this.#derivedParts(namespace, change)
      const generation = episodes.generation ?? graph.generation
      return { ...written, ...(generation !== undefined ? { generation } : {}), derived: { ...graph.report, ...episodes.report } }
    })
  }

  /**
   * A documents change's derived graph part, then its derived Episodes part, which finds the documents' derivation the
   * first made; that derivation is let go after both (kept, it outweighed the derived stores' own copy: issue 44).
   */
  async #derivedParts(namespace: string, change: Extract<Change, { kind: 'documents' }>) {
    try {
      const graph = await this.#recordedDerivation(namespace, change)
      const episodes = await this.#recordedEpisodes(namespace, change)
      return { graph, episodes }
    } finally {
      forgetDerived(documentIdsOf(change), this.#ports.documents.get(namespace))
    }
  }

  /**
   * A documents change's derived Episodes: under the `episodes:` lock, this replica caught up, the written documents'
   * Episodes derived from the chunks stored now replace their previous ones; then episodic's write is recorded when
   * they changed (also when the write failed half-way). Idempotent, so a replayed write derives again.
   */
  async #recordedEpisodes(namespace: string, change: Extract<Change, { kind: 'documents' }>): Promise<{ report?: DerivedEpisodesReport; generation?: number }> {
    const settings = this.#episodeDerivation
    if (!settings) return {}
    const record = () => this.#ports.generations.recordWrite(namespace, ['episodic'])
    let derived: { changed: boolean; report: DerivedEpisodesReport }
    try {
      derived = await this.#deriveEpisodes(namespace, documentIdsOf(change), settings)
    } catch (error) {
      await record()
      throw error
    }
    const generation = derived.changed ? await record() : undefined
    return { report: derived.report, ...(generation !== undefined ? { generation } : {}) }
  }

  /**
   * Under the `episodes:` lock, this replica caught up, the documents' Episodes derived from the chunks stored now
   * replace their previous ones, and each document's outcome is recorded (a failure as `failed`, then thrown).
   */
  async #deriveEpisodes(
    namespace: string, docIds: readonly string[], settings: NonNullable<WritePathOptions['episodeDerivation']>
  ): Promise<{ changed: boolean; report: DerivedEpisodesReport; items: Map<string, number> }> {
    const { documents, episodes, vectors, embedder, config } = this.#ports
    try {
      return await this.#exclusive('episodes', namespace)(async (lease) => {
        await this.#ports.catchUpDocuments(namespace)
        const library = documents.get(namespace)
        const result = await replaceDerivedEpisodes({ graph: episodes, vectors, embedder }, namespace, docIds, library, {
          derivation: settings.derivation, episodes: settings.episodes, collectionPrefix: config.collectionPrefix
        }, lease)
        const items = await derivedEpisodeItems(episodes, namespace, docIds, settings.episodes)
        await this.#recordDerivations(namespace, 'derived_episodes', docIds, library, (docId) => ({ state: 'done', items: items.get(docId) ?? 0 }))
        return { ...result, items }
      })
    } catch (error) {
      await this.#recordFailure(namespace, 'derived_episodes', docIds, error)
      throw error
    }
  }

  /**
   * A documents change's derived part: the written documents' contributions replace their previous ones (a deleted
   * document contributes nothing). Under the `graph:` lock, this replica is caught up and the documents are derived
   * from the chunks stored now, so that the last derived write of a document derives its last stored version however
   * two writers' steps interleave; idempotent, so a replayed write derives again. Whether the graph changed.
   */
  async #derive(namespace: string, docIds: readonly string[], options: DerivationOptions): Promise<{ changed: boolean; report: DerivedGraphReport; items: Map<string, number> }> {
    try {
      return await this.#deriveGraph(namespace, docIds, options)
    } catch (error) {
      await this.#recordFailure(namespace, 'derived_graph', docIds, error)
      throw error
    }
  }

  /** The derived graph's write; the entity-names write is told which entities it touched (all, when that is not known). */
  async #replaceDerived(namespace: string, contributions: ReadonlyMap<string, KgContribution>): Promise<KgDerivedWriteResult> {
    try {
      const result = await this.#ports.graph.replaceDerived(namespace, contributions)
      this.#entityLedger?.touch(namespace, result.entityIds)
      return result
    } catch (error) {
      this.#entityLedger?.forget(namespace)
      throw error
    }
  }

  async #deriveGraph(namespace: string, docIds: readonly string[], options: DerivationOptions): Promise<{ changed: boolean; report: DerivedGraphReport; items: Map<string, number> }> {
    // The LLM is asked before the lock (as passages are embedded before theirs); under it, its answers come from the cache.
    const asked = this.#llm ? (await this.#llm.extract(chunksOf(docIds, this.#ports.documents.get(namespace)))).stats : undefined
    return this.#exclusive('graph', namespace)(async (lease) => {
      await this.#ports.catchUpDocuments(namespace)
      const library = this.#ports.documents.get(namespace)
      let contributions = contributionsOf(docIds, library, options)
      let llm: LlmExtractionStats | undefined
      let llmFailed: Map<string, LlmExtractionStats> | undefined
      if (this.#llm) {
        const joined = await withLlmExtraction(contributions, library, this.#llm, options, { cacheOnly: true })
        contributions = joined.contributions
        // what the calls took, and which chunks have no extraction in what was derived
        llm = { ...asked!, chunks: joined.stats.chunks, failed: joined.stats.failed }
        llmFailed = joined.byDocument
      }
      lease.assertHeld()
      const result = await this.#replaceDerived(namespace, contributions)
      const items = await derivedGraphItems(this.#ports.graph, namespace, [...contributions.keys()])
      await this.#recordDerivations(namespace, 'derived_graph', [...contributions.keys()], library, (docId) => {
        const failed = llmFailed?.get(docId)
        // the rules' part is derived; the LLM's part of these chunks is missing
        return failed && failed.failed > 0
          ? { state: 'failed', items: items.get(docId) ?? 0, reason: `LLM extraction failed for ${failed.failed} of ${failed.chunks} chunk(s): every attempt timed out or was refused (LLM_TIMEOUT_MS, LLM_RETRIES); only the rules' part is derived; rebuild "derived_graph" asks again` }
          : { state: 'done', items: items.get(docId) ?? 0 }
      })
      const all = [...contributions.values()]
      return {
        items,
        changed: result.written.entities + result.written.relations + result.removed.entities + result.removed.relations > 0,
        report: {
          entities: all.reduce((n, c) => n + c.entities.length, 0),
          relations: all.reduce((n, c) => n + c.relations.length, 0),
          blocked: result.blocked.length,
          ...(llm ? { llm } : {})
        }
      }
    })
  }

  /**
   * Derives, then records graphrag's write when the derived graph changed (also when the derived write failed half-way)
   * and answers the generation reached; a derivation that changed nothing records nothing.
   */
  async #recordedDerivation(namespace: string, change: Extract<Change, { kind: 'documents' }>): Promise<{ report?: DerivedGraphReport; generation?: number }> {
    const options = this.#derivation
    if (!options) return {}
    const record = () => this.#ports.generations.recordWrite(namespace, ['graphrag'])
    let derived: { changed: boolean; report: DerivedGraphReport }
    try {
      derived = await this.#derive(namespace, documentIdsOf(change), options)
    } catch (error) {
      await record()
      throw error
    }
    const generation = derived.changed ? await record() : undefined
    if (derived.changed) await this.#askEntityNames(namespace)
    return { report: derived.report, ...(generation !== undefined ? { generation } : {}) }
  }

  /** The writes of these kinds that a killed run left in the journal, finished and recorded; how many there were. */
  async recover(kinds: readonly ChangeKind[]): Promise<number> {
    let finished = 0
    for (const journal of [this.#journal, ...this.#legacyJournals]) {
      if (!journal) continue
      for (const { name, entry } of await journal.pending()) {
        const { namespace, change, before } = journal === this.#journal ? entry as WriteEntry : fromLegacyEntry(entry as LegacyEntry)
        if (!kinds.includes(change.kind)) continue
        const remaining = await this.#remaining(namespace, change, before)
        await this.#recorded(namespace, change, async () => {
          if (remaining) await this.#apply(namespace, remaining, {})
          return {}
        }).catch((error: unknown) => {
          // a body refused now (its references gone, its ids taken) is dropped
          if (!(error instanceof EpisodeIngestError || error instanceof ConversationIngestError)) throw error
        })
        if (change.kind === 'documents') {
          // the pictures of documents whose chunks were whole already may not be (a picture changed alone)
          await this.#recorded(namespace, change, () => this.#applyImages(namespace, change, new Set()))
          await this.#derivedParts(namespace, change)
        }
        if (change.kind === 'model') await this.#recordModel(namespace)
        await journal.end(name)
        finished += 1
      }
    }
    return finished
  }

  /**
   * What is left to do of a write a killed run began, so that it ends complete: the documents it never reached or
   * left as a mix of two versions, unless a later write changed them (`unfinishedDocuments`, `unfinishedDeletes`); an
   * Episode write is written again whole (re-ingesting an Episode id replaces it, deleting an absent one does nothing).
   */
  async #remaining(namespace: string, change: Change, before: HeldBefore | undefined): Promise<Change | undefined> {
    if (change.kind === 'documents') {
      const library = await this.#ports.documents.forWrite(namespace)
      const stored = (id: string) => library.storedChunks(id)
      if (change.op === 'delete') {
        const ids = unfinishedDeletes(change.ids, stored, before)
        return ids.length > 0 ? { kind: 'documents', op: 'delete', ids } : undefined
      }
      const documents = unfinishedDocuments(change.documents, stored, before)
      return documents.length > 0 ? { kind: 'documents', op: 'upsert', documents } : undefined
    }
    return change
  }

  /** What the namespace holds of a documents change's documents, as the apply will find them (a delete opens no library). */
  async #heldBefore(namespace: string, change: Extract<Change, { kind: 'documents' }>): Promise<HeldBefore> {
    const { documents } = this.#ports
    const library = change.op === 'upsert' ? await documents.forWrite(namespace) : documents.get(namespace)
    const ids = change.op === 'upsert' ? change.documents.map((d) => d.id) : change.ids
    return heldBefore(ids, (id) => library?.storedChunks(id) ?? new Map())
  }

  /** The pictures of a documents change (src/corpus/appliers/images.ts), under the `documents:` lock. */
  #applyImages(namespace: string, change: Extract<Change, { kind: 'documents' }>, notWritten: ReadonlySet<string>): Promise<ImagesReport> {
    const { vectors, embedder, config } = this.#ports
    return applyImages({ vectors, embedder }, namespace, change, {
      collection: `${config.collectionPrefix}${IMAGES_COLLECTION}`, limits: config.images ?? DEFAULT_PICTURE_LIMITS,
      exclusive: this.#exclusive('documents', namespace), notWritten
    })
  }

  /**
   * Records each document's derivation on a channel, with the stored chunks it derived from (under the channel's lock,
   * so that the record of the last derivation is the last one written); a document the library no longer holds loses its records.
   */
  async #recordDerivations(
    namespace: string, channel: DerivedChannel, docIds: readonly string[], library: DocumentLibraryView | undefined,
    outcome: (docId: string) => Omit<DerivationRecord, 'chunks' | 'input'>
  ): Promise<void> {
    const records = new Map<string, DerivationRecord>()
    const gone: string[] = []
    for (const docId of docIds) {
      const chunks = library ? fingerprintOf(library.storedChunks(docId)) : null
      const input = library ? derivationInputOf(library, docId) : null
      if (chunks === null || input === null) gone.push(docId)
      else records.set(docId, { chunks, input, ...outcome(docId) })
    }
    await this.#records.forget(namespace, gone)
    await this.#records.put(namespace, channel, records)
  }

  /** Records a derivation that failed as `failed` with its reason; when even that fails, the documents stay `pending`. */
  async #recordFailure(namespace: string, channel: DerivedChannel, docIds: readonly string[], error: unknown): Promise<void> {
    const reason = `its derivation failed: ${error instanceof Error ? error.message : String(error)}`
    const library = this.#ports.documents.get(namespace)
    const held = library ? docIds.filter((id) => library.has(id)) : []
    await this.#recordDerivations(namespace, channel, held, library, () => ({ state: 'failed', reason, items: 0 })).catch(() => undefined)
  }

  #exclusive(kind: LockKind, namespace: string): Exclusive {
    return exclusiveOf(this.#lock, `${kind}:${namespace}`)
  }

  async #journalled<T>(namespace: string, change: Change, write: () => Promise<T>): Promise<T> {
    if (!this.#journal || !JOURNALLED.has(change.kind)) return write()
    const name = await this.#journal.begin({ namespace, change, ...(change.kind === 'documents' ? { before: await this.#heldBefore(namespace, change) } : {}) })
    this.#afterJournal?.()
    try {
      return await write()
    } finally {
      await this.#journal.end(name)
    }
  }

  /**
   * Runs the write, then records it, also when it failed (it may have changed something before failing). A write
   * that changed nothing (every document held already as sent) is not recorded: it answers the generation now. With a
   * draft whose marks all landed, a write that succeeded leaves its documents' states in the write window; a failed one
   * leaves none (what it stored is unknown).
   */
  async #recorded<T extends object>(namespace: string, change: Change, write: () => Promise<T>, draft?: WindowDraft): Promise<T & { generation?: number }> {
    const { generations } = this.#ports
    const record = (kept?: WindowDraft) => {
      const changes = changedDocuments(change)
      const window = kept?.marked && changes ? { token: kept.token, states: kept.states } : undefined
      return generations.recordWrite(namespace, recordedKinds(change), changes && window ? { ...changes, window } : changes)
    }
    let result: T
    try {
      result = await write()
    } catch (error) {
      await record()
      throw error
    }
    const generation = changedNothing(change, result)
      ? (await generations.readState(recordedKinds(change)[0]!, namespace)).generation
      : await record(draft)
    return generation === undefined ? result : { ...result, generation }
  }

  async #apply<C extends Change>(namespace: string, change: C, options: WriteOptions, draft?: WindowDraft): Promise<ResultOf<C>> {
    return await this.#applyAny(namespace, change, options, draft) as ResultOf<C>
  }

  /**
   * The `documents:` lock, within which these documents are first marked as being written (the write window: what it
   * kept of them ends, and this write's record may keep their new states only while its marks stand).
   */
  #markedExclusive(namespace: string, docIds: readonly string[], draft: WindowDraft | undefined): Exclusive {
    if (!draft) return this.#exclusive('documents', namespace)
    return (write) => this.#lock.exclusive(`documents:${namespace}`, async (lease) => {
      if (!await this.#ports.generations.markWriting(namespace, docIds, draft.token)) draft.marked = false
      return write(lease)
    })
  }

  async #applyAny(namespace: string, change: Change, options: WriteOptions, draft?: WindowDraft): Promise<ResultOf<Change>> {
    const { documents, graph, vectors, embedder, episodes, config } = this.#ports
    switch (change.kind) {
      case 'documents': {
        const written = await applyDocuments(documents, namespace, change, {
          exclusive: (docIds) => this.#markedExclusive(namespace, docIds, draft),
          // only what this write stored: a document found unchanged may have been changed meanwhile by a write not yet recorded
          ...(draft ? { onWritten: (ids: readonly string[], chunks: readonly ChunkRecord[]) => keepStates(draft, ids, chunks) } : {}),
          ...(options.onProgress ? { onProgress: options.onProgress } : {})
        })
        const skipped = new Set('skipped' in written ? (written.skipped ?? []).map((s) => s.id) : [])
        const images = await this.#applyImages(namespace, change, skipped)
        const { written: added, removed, small, refused } = images
        return added + removed + small + refused.length + images.unchanged > 0 ? { ...written, images } : written
      }
      case 'graph':
        return applyGraph(graph, namespace, change, this.#exclusive('graph', namespace))
      case 'episodes':
        return applyEpisodes({ graph: episodes, vectors, embedder }, namespace, change, {
          collectionPrefix: config.collectionPrefix, exclusive: this.#exclusive('episodes', namespace)
        })
      case 'conversations':
        return applyConversations({ graph: episodes, vectors, embedder }, namespace, change, {
          collectionPrefix: `${config.collectionPrefix}${DERIVED_COLLECTION_PREFIX}`, exclusive: this.#exclusive('episodes', namespace),
          derivation: this.#episodeDerivation?.derivation ?? this.#derivation ?? DEFAULT_DERIVATION_OPTIONS
        })
      case 'namespace': {
        const removed = await applyNamespaceDrop(this.#ports, namespace, {
          documents: this.#exclusive('documents', namespace),
          graph: this.#exclusive('graph', namespace),
          episodes: this.#exclusive('episodes', namespace)
        })
        await this.#records.drop(namespace)
        return removed ? { removed } : {}
      }
      case 'model':
        return {
          reembedded: await applyReembed(this.#ports, namespace, {
            documents: this.#exclusive('documents', namespace),
            episodes: this.#exclusive('episodes', namespace),
            entities: this.#exclusive('entities', namespace)
          })
        }
      case 'rebuild': {
        const { derivation, episodeDerivation, entityNames } = { derivation: this.#derivation, episodeDerivation: this.#episodeDerivation, entityNames: this.#entityNames }
        const off = (channel: string) => () => Promise.reject(new RebuildRefusedError(`channel "${channel}" is off in this service: nothing builds it (docs/derivation.md)`))
        try {
          return await applyRebuild(documents, namespace, change, {
            exclusive: this.#exclusive('documents', namespace),
            deriveGraph: derivation ? async (docIds) => (await this.#derive(namespace, docIds, derivation)).items : off('derived_graph'),
            deriveEpisodes: episodeDerivation ? async (docIds) => (await this.#deriveEpisodes(namespace, docIds, episodeDerivation)).items : off('derived_episodes'),
            syncEntityNames: entityNames ? (docIds) => this.#resyncEntityNames(namespace, docIds, entityNames) : off('entity_vectors')
          })
        } finally {
          forgetDerived(change.ids, documents.get(namespace))
        }
      }
      case 'legacy-points':
        return applyLegacyPoints(vectors, change, { documents: this.#exclusive('documents', namespace), episodes: this.#exclusive('episodes', namespace) })
      case 'entities':
        return applyEntityNames({ graph, vectors, embedder }, namespace, {
          collection: entityCollectionOf(config.collectionPrefix), failures: this.#entityNames?.failures ?? new EntityNameFailures(),
          exclusive: this.#exclusive('entities', namespace), ...(this.#entityLedger ? { ledger: this.#entityLedger } : {}),
          ...(options.signal ? { signal: options.signal } : {})
        })
    }
  }
}
