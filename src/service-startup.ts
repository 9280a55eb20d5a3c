/**
 * Every start-up step of the service, registered in this one place (their names: src/kernel/startup-steps.ts).
 * Loading the model first thing matters: a first load blocks the event loop for about a second, better before
 * traffic than under it. The document library is `required`: hybrid cannot answer without its catalog and BM25
 * index. The other steps hold requests back only during their first attempt; after a failure the backend answers
 * for itself (a 503 naming it) while the step is retried.
 */
import type { Config } from './config.js'
import { loadDemoDocuments, loadDemoEpisodes, loadDemoGraph, type DemoTargets } from './corpus/demo.js'
import type { DocumentLibraries } from './corpus/libraries.js'
import { soleWriterStep } from './corpus/sole-writer/index.js'
import type { WritePath } from './corpus/write-path.js'
import type { ModeTable } from './modes.js'
import type { Embedder } from './providers/embedder/port.js'
import type { KnowledgeGraphStore } from './providers/knowledge-graph/port.js'
import type { EpisodicGraphStore } from './providers/episodic-graph/port.js'
import { entityCollectionOf } from './corpus/entity-vectors.js'
import { DEFAULT_NAMESPACE } from './providers/namespace.js'
import { DERIVED_COLLECTION_PREFIX, EPISODIC_COLLECTIONS } from './providers/episodic-graph/collections.js'
import type { WaitReplicasWatch } from './providers/redis-replicas.js'
import type { RedisClient } from './providers/redis-client.js'
import type { VectorStore } from './providers/vector-store/port.js'
import type { Startup, StartupLogger } from './startup.js'

export interface StartupWork {
  config: Config
  embedder: Embedder
  vectors: VectorStore
  graph: KnowledgeGraphStore
  episodes: EpisodicGraphStore
  documents: DocumentLibraries
  writePath: WritePath
  modes: ModeTable
  /** What the demo world is written through, when it is loaded (the server, when `DEMO_DATA` allows; not the CLI). */
  demo?: DemoTargets
  /** The connection writes are confirmed on (the sole writer's registration in Redis takes it too). */
  writeRedis?: RedisClient
  /** Redis's replicas checked against `REDIS_WAIT_REPLICAS`, when it asks for any. */
  replicaWatch?: WaitReplicasWatch
  /** Brings a namespace's catalog up to the shared stores (the background read of every namespace after a lazy start). */
  catchUp(namespace: string): Promise<void>
  /** Leave the model to its first use (the CLI's `--direct`). */
  lazyEmbedder: boolean
  logger?: Pick<StartupLogger, 'warn'>
}

export function addStartupSteps(startup: Startup, work: StartupWork): void {
  const { config, documents, writePath, replicaWatch } = work
  const soleWriter = soleWriterStep(config, work.writeRedis, work.logger)
  if (soleWriter) startup.add(soleWriter)
  // Replicas that must confirm every lock and record (WAIT): a deployment without them is refused at start-up, not at each write.
  if (replicaWatch) {
    startup.add({
      name: 'redis:replicas',
      doing: `checking that Redis's masters have the ${config.cache.redisWait.replicas} replica(s) REDIS_WAIT_REPLICAS asks to confirm writes`,
      required: true,
      run: async () => {
        const line = await replicaWatch.check()
        replicaWatch.follow()
        return line
      }
    })
  }
  startup.add({
    name: 'embedder',
    doing: config.embedder.backend === 'local' ? 'loading the embedding model' : 'calling the embedding server',
    run: async () => {
      if (work.lazyEmbedder) return 'left to its first use'
      await work.embedder.embedQueries(['预热'])
    }
  })
  // Only Qdrant can hold points a version before namespaces wrote (the embedded store files each record under its
  // namespace); they are given to `default` before the library reads its catalog, inside this step, so that /readyz
  // names the one step that waits for Qdrant. It does not wait for the sole-writer claim: adopting is idempotent (a
  // second instance finds none left, or gives the same points the same namespace).
  const legacy = work.vectors.backend === 'qdrant'
  startup.add({
    name: 'documents',
    doing: `opening the document library (${legacy ? 'points written before namespaces given to default, ' : ''}vector store scan, BM25 index)`,
    required: true,
    run: async () => {
      const adopted = legacy ? `; legacy points: ${await adoptLegacyPoints(work)}` : ''
      await documents.open()
      // Writes a killed run left unfinished: made whole, then recorded, so that every replica re-reads them.
      await writePath.recover(['documents', 'rebuild'])
      if (documents.lazy) {
        void warmCatalog(work)
        return `each namespace is read from the shared stores on its first use (all of them in the background now)${adopted}`
      }
      return `${documents.documentCount} documents, ${documents.chunkCount} chunks; catalog: ${catalogSources(documents.openedFrom)}${adopted}`
    }
  })
  if (writePath.journalled) {
    startup.add({
      name: 'episodes:journal',
      doing: 'finishing the Episode and conversation writes a killed run left unfinished',
      after: ['embedder'],
      run: async () => `${await writePath.recover(['episodes', 'conversations', 'model'])} unfinished Episode, conversation and re-embed writes finished`
    })
  }
  startup.add({
    name: 'knowledge-graph',
    doing: 'initialising the knowledge graph',
    run: async () => { await work.graph.init() }
  })
  startup.add({
    name: 'entity-names',
    doing: 'asking again for the entity-name vectors a killed run left unwritten',
    after: ['knowledge-graph', 'embedder'],
    run: async () => `${await writePath.resumeEntityNames(() => work.graph.namespaces())} namespaces' entity names asked for`
  })
  const { demo } = work
  if (demo) {
    startup.add({ name: 'demo:graph', doing: 'loading the demo knowledge graph', after: ['knowledge-graph'], run: () => loadDemoGraph(demo) })
    startup.add({ name: 'demo:episodes', doing: 'loading the demo episodic memory', run: () => loadDemoEpisodes(demo) })
    startup.add({ name: 'demo:documents', doing: 'loading the demo corpus', after: ['documents'], run: (progress) => loadDemoDocuments(demo, progress) })
  }
  // The embedded stores read a namespace's files on its first use; without this step the first episodic read after
  // /readyz read the episodic graph and the Episodes' vectors (14-49 s at 100k chunks) and was refused by its legs'
  // deadlines meanwhile (issue 44). After the documents and the graph, so that hybrid and graphrag answer first; a
  // knowledge graph in a thread of its own (`GRAPH_THREAD`) loads on another core, so it is not waited for. Not for a
  // one-off command (the CLI's `--direct`, which leaves the model to its first use too).
  if (!work.lazyEmbedder && (work.vectors.backend === 'memory' || work.episodes.backend === 'memory')) {
    const graphInThread = config.graph.backend === 'memory' && config.graph.thread
    startup.add({
      name: 'episodic:stores',
      doing: 'reading the entity-name vectors, the Episodes\' vectors and the episodic graph into memory',
      after: graphInThread ? ['documents'] : ['documents', 'knowledge-graph'],
      run: async (progress) => readEmbeddedStores(work, progress)
    })
  }
  startup.add({
    name: 'graphrag:names',
    doing: 'building the graphrag name matcher',
    after: demo ? ['demo:graph'] : [],
    run: () => work.modes.graphrag.warm(DEFAULT_NAMESPACE)
  })
}

/**
 * Counts the points without a namespace in the collections a version before namespaces wrote (the chunks and the
 * imported Episodes'); only when there are some, the write path gives them to `default` (journalled, under its locks,
 * recorded). Replicas starting together: the one that takes the lock first adopts them, the others find none left.
 */
async function adoptLegacyPoints(work: StartupWork): Promise<string> {
  const { vectors, writePath } = work
  await writePath.recover(['legacy-points'])
  const held = async (collection: string) => (await vectors.legacyRecords(collection)) > 0
  const chunks = work.documents.collection
  const episodic: string[] = []
  for (const name of EPISODIC_COLLECTIONS) {
    const collection = `${work.config.collectionPrefix}${name}`
    if (await held(collection)) episodic.push(collection)
  }
  const chunksHeld = await held(chunks)
  if (!chunksHeld && episodic.length === 0) return 'none found'
  const { adopted, generation } = await writePath.write(DEFAULT_NAMESPACE, {
    kind: 'legacy-points', op: 'adopt', ...(chunksHeld ? { chunks } : {}), ...(episodic.length > 0 ? { episodic } : {})
  })
  return `${adopted} points adopted into ${DEFAULT_NAMESPACE}${generation === undefined ? '' : ` (generation ${generation})`}`
}

/**
 * Opens every namespace of the collections and the graph graphrag and episodic read, on the embedded stores: what their
 * first read would otherwise read. Entity names first (graphrag's, small), then the Episodes' collections and graph.
 */
async function readEmbeddedStores(work: StartupWork, progress: (detail: string) => void): Promise<string> {
  const prefix = work.config.collectionPrefix
  const collections = work.vectors.backend === 'memory'
    ? [entityCollectionOf(prefix), ...EPISODIC_COLLECTIONS.flatMap((name) => [`${prefix}${DERIVED_COLLECTION_PREFIX}${name}`, `${prefix}${name}`])]
    : []
  let graph = work.episodes.backend === 'memory' ? 'being read' : 'not embedded'
  // the graph's load gives the event loop turns (load-steps.ts), so its work fills the vector files' waits on the disk
  const readGraph = async (): Promise<number> => {
    if (work.episodes.backend !== 'memory') return 0
    let nodes = 0
    for (const namespace of await work.episodes.namespaces()) nodes += Object.values(await work.episodes.countByType(namespace)).reduce((a, b) => a + b, 0)
    graph = 'read'
    return nodes
  }
  let records = 0
  const readVectors = async (): Promise<void> => {
    for (const [i, collection] of collections.entries()) {
      progress(`${i} of ${collections.length} collections read (${records} records); the episodic graph ${graph}`)
      for (const namespace of await work.vectors.namespaces(collection)) records += await work.vectors.count(collection, namespace)
    }
    progress(`${collections.length} collections read (${records} records); the episodic graph ${graph}`)
  }
  const [nodes] = await Promise.all([readGraph(), readVectors()])
  return `${records} records in ${collections.length} collections, ${nodes} episodic graph nodes`
}

/**
 * Reads every namespace's catalog copy in the background after a lazy start-up, one namespace at a time, so that
 * the first requests seldom wait for it; a request that comes first shares the read under way.
 */
async function warmCatalog(work: StartupWork): Promise<void> {
  try {
    for (const namespace of await work.vectors.namespaces(work.documents.collection)) await work.catchUp(namespace)
  } catch {
    // a store that is down: each namespace is read on its first use instead
  }
}

/** Where the namespaces' catalogs came from: each source with its count (`checkpoint`, `scroll`, or why a file was not used). */
function catalogSources(openedFrom: ReadonlyMap<string, string>): string {
  const counts = new Map<string, number>()
  for (const from of openedFrom.values()) counts.set(from, (counts.get(from) ?? 0) + 1)
  return [...counts].map(([from, n]) => `${from}${openedFrom.size > 1 ? ` × ${n}` : ''}`).join(', ') || 'none'
}
