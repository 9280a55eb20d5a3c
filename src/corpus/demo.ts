import { ModelMismatchError } from './namespace-models.js'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { checkedDocuments } from './documents-body.js'
import { readDocuments } from './files.js'
import { readFile } from 'node:fs/promises'
import { readGraphFile } from './graph.js'
import { DEFAULT_NAMESPACE } from '../providers/namespace.js'
import type { VectorStore } from '../providers/vector-store/port.js'
import type { EpisodicGraphStore } from '../providers/episodic-graph/port.js'
import type { KnowledgeGraphStore } from '../providers/knowledge-graph/port.js'
import type { DocumentLibraries } from './libraries.js'
import type { WritePath } from './write-path.js'

/** What the demo world is loaded through (the services satisfy it): the stores are read to see whether they are empty. */
export interface DemoTargets {
  graph: KnowledgeGraphStore
  episodes: EpisodicGraphStore
  vectors: VectorStore
  config: { collectionPrefix: string }
  documents: DocumentLibraries
  writePath: WritePath
}

/** Where the demo world is: the nearest `demo/` above this module (src/ under tsx, dist/src/ or another build folder). */
export function demoDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    if (existsSync(join(dir, 'demo', 'documents'))) return `${join(dir, 'demo')}/`
    const parent = dirname(dir)
    if (parent === dir) return fileURLToPath(new URL('../../demo/', import.meta.url))
    dir = parent
  }
}

// Each part of the demo world is loaded into the `default` namespace of its store when that is empty; one
// that holds anything is left alone. Each resolves with a line for the log. The services' start-up runs them.

export async function loadDemoGraph(services: DemoTargets): Promise<string> {
  const file = `${demoDir()}graph.json`
  if (!existsSync(file)) return 'no demo graph'
  // what the demo documents derived does not count: they may have been written first
  if ((await services.graph.names(DEFAULT_NAMESPACE)).some((n) => !n.derived)) return 'the knowledge graph holds imported entities; left alone'
  const body = await readGraphFile(file)
  const result = await services.writePath.write(DEFAULT_NAMESPACE, { kind: 'graph', op: 'upsert', body })
  return `${result.entities} entities, ${result.relations} relations`
}

export async function loadDemoEpisodes(services: DemoTargets): Promise<string> {
  const file = `${demoDir()}episodes.json`
  if (!existsSync(file)) return 'no demo episodes'
  // Episodes derived from the demo documents do not count (they may have been written first): only imported ones,
  // whose summaries are in the imported collection
  if (await services.vectors.count(`${services.config.collectionPrefix}Episode_summary`, DEFAULT_NAMESPACE) > 0) {
    return 'the episodic memory holds imported Episodes; left alone'
  }
  const body = JSON.parse(await readFile(file, 'utf8')) as unknown
  const result = await leftAloneOnOtherModel(() => services.writePath.write(DEFAULT_NAMESPACE, { kind: 'episodes', op: 'upsert', body }))
  return typeof result === 'string' ? result : `${result.episodes} episodes, ${result.facets} facets, ${result.points} points`
}

/** `progress` hears how many chunks are embedded so far. */
export async function loadDemoDocuments(services: DemoTargets, progress: (detail: string) => void): Promise<string> {
  const dir = `${demoDir()}documents`
  if (!existsSync(dir)) return 'no demo corpus'
  // a library read on first use (several replicas) is read now, so that a corpus another replica loaded is seen
  if (services.documents.lazy) await services.documents.refresh(DEFAULT_NAMESPACE)
  if ((services.documents.get(DEFAULT_NAMESPACE)?.documentCount ?? 0) > 0) return 'the document library is not empty; left alone'
  const docs = checkedDocuments({ documents: await readDocuments([dir]), namespace: DEFAULT_NAMESPACE })
  const summary = await leftAloneOnOtherModel(() => services.writePath.write(DEFAULT_NAMESPACE, { kind: 'documents', op: 'upsert', documents: docs },
    { onProgress: (embedded, total) => progress(`${embedded} of ${total} chunks embedded`) }))
  return typeof summary === 'string' ? summary : `${summary.documents} documents, ${summary.chunks} chunks in ${Math.round(summary.took_ms)} ms`
}

/** The write's answer, or a line for the log when `default` holds another model's vectors (the demo is then not loaded). */
async function leftAloneOnOtherModel<T>(write: () => Promise<T>): Promise<T | string> {
  try {
    return await write()
  } catch (error) {
    if (error instanceof ModelMismatchError) return `the default namespace holds vectors made with ${error.recorded}; left alone`
    throw error
  }
}
