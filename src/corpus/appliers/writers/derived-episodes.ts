/**
 * The derived Episodes' part of a document write (docs/derivation.md, "Derived Episodes"): each written document's
 * Episodes, derived from the chunks the library stores for it now, replace the ones it derived before (none for a
 * deleted document), in their own collections (`derived_<name>`), never over an imported Episode.
 */
import { deriveEpisodes, derivedEpisodeIds, type BorrowedVector, type EpisodeChunk, type EpisodeDerivationOptions } from '../../../derive/episodes.js'
import type { DerivationOptions } from '../../../derive/options.js'
import { normalizeL2 } from '../../../providers/embedder/vectors.js'
import { DERIVED_COLLECTION_PREFIX } from '../../../providers/episodic-graph/collections.js'
import type { EpisodeGraph, EpisodicNode } from '../../../providers/episodic-graph/port.js'
import type { ChunkRecord } from '../../../kernel/chunk-payload.js'
import { passageText } from '../../../kernel/lexical-text.js'
import { derivedContribution, storedChunksOf } from '../../derived-contribution.js'
import type { DocumentLibraryView } from '../../document-views.js'
import { writeEpisodeGraphs, type EpisodicIngestPorts } from './episode-graphs.js'
import type { Lease } from '../../write-lock.js'

/** What a documents write did to the derived Episodes (the ingest answer's `derived`). */
export interface DerivedEpisodesReport {
  /** Episodes, Facets and FacetPoints the written documents have now. */
  episodes: number
  facets: number
  points: number
  /** Derived Episode ids left alone because an imported Episode holds them. */
  episodes_blocked: number
  /**
   * Texts of the written Episodes embedded now, and their records that took a vector already at hand instead (their chunks',
   * or the stored one of the same text).
   */
  episode_texts_embedded: number
  episode_vectors_reused: number
}

export interface DerivedEpisodesOptions {
  derivation: DerivationOptions
  episodes: EpisodeDerivationOptions
  /** `COLLECTION_PREFIX`. */
  collectionPrefix: string
}

/** A document's chunks as Episode derivation reads them, from the library's catalog, in chunk order. */
function episodeChunks(chunks: readonly ChunkRecord[]): EpisodeChunk[] {
  return chunks.map((c) => ({
    id: c.id, chunk_index: c.chunk_index, text: c.text, passage: passageText(c),
    ...(c.title ? { title: c.title } : {}), ...(c.heading_path ? { heading_path: c.heading_path } : {})
  }))
}

/**
 * Replaces the derived Episodes of `docIds` with what they derive now, under the caller's `episodes:` lock (`lease`).
 * An Episode that derives as it is stored (same hash) is not written again; an id an imported Episode holds is left
 * alone. Whether anything changed, and the report.
 */
export async function replaceDerivedEpisodes(
  ports: EpisodicIngestPorts, namespace: string, docIds: readonly string[], library: DocumentLibraryView | undefined,
  options: DerivedEpisodesOptions, lease: Lease
): Promise<{ changed: boolean; report: DerivedEpisodesReport }> {
  const derived = docIds.map((docId) => {
    // the same contribution as the derived graph's (derived-graph.ts), so the Episodes link the graph's entities
    const records = storedChunksOf(docId, library)
    const contribution = records.length === 0 ? { entities: [] } : derivedContribution(records, options.derivation)
    return { docId, ...deriveEpisodes(docId, episodeChunks(records), contribution.entities, options.episodes) }
  })
  const candidates = docIds.flatMap((id) => derivedEpisodeIds(id, options.episodes))
  const present = [...(await ports.graph.nodeTypes(namespace, candidates)).entries()].filter(([, type]) => type === 'Episode').map(([id]) => id)
  const stored = new Map<string, EpisodicNode>()
  if (present.length > 0) {
    const fragment = await ports.graph.describe(namespace, present)
    for (const id of present) {
      const node = fragment.nodes.get(id)
      if (node) stored.set(id, node)
    }
  }
  const report: DerivedEpisodesReport = { episodes: 0, facets: 0, points: 0, episodes_blocked: 0, episode_texts_embedded: 0, episode_vectors_reused: 0 }
  const write: EpisodeGraph[] = []
  const remove: string[] = []
  const entities = new Map<string, EpisodicNode>()
  for (const d of derived) {
    const fresh = new Set(d.episodes.map((e) => e.episode.id))
    for (const id of derivedEpisodeIds(d.docId, options.episodes)) {
      const node = stored.get(id)
      if (node && node.derived_doc === d.docId && !fresh.has(id)) remove.push(id)
    }
    for (const graph of d.episodes) {
      const node = stored.get(graph.episode.id)
      if (node && node.derived_doc !== d.docId) {
        report.episodes_blocked += 1
        continue
      }
      report.episodes += 1
      report.facets += graph.nodes.filter((n) => n.type === 'Facet').length
      report.points += graph.nodes.filter((n) => n.type === 'FacetPoint').length
      if (node?.derived_hash === graph.episode.derived_hash) continue
      write.push(graph)
    }
    for (const e of d.entities) entities.set(e.id, e)
  }
  if (write.length === 0 && remove.length === 0) return { changed: false, report }
  // entities already stored are linked, not written again (their name is their key: the same whoever wrote them)
  const linked = new Set(write.flatMap((g) => g.edges.map((e) => e.to)))
  const known = await ports.graph.nodeTypes(namespace, [...entities.keys()].filter((id) => linked.has(id)))
  const newEntities = [...entities.values()].filter((e) => linked.has(e.id) && !known.has(e.id))
  const writing = new Set(write.map((g) => g.episode.id))
  const borrowed = derived.flatMap((d) => d.borrowed).filter((b) => writing.has(b.episode))
  const collectionPrefix = `${options.collectionPrefix}${DERIVED_COLLECTION_PREFIX}`
  const fromChunks = await chunkVectors(ports, namespace, library, borrowed)
  const names = new Map(newEntities.map((e) => [e.id, e.name ?? e.id] as const))
  const held = await storedTextVectors(ports, namespace, collectionPrefix, write, entities, known, [...names.values()])
  const vectorFor = (collection: string, id: string): Float32Array | undefined =>
    fromChunks(collection, id) ??
    (collection === 'RelationType_relationship_name' ? held.get(id) : collection === 'Entity_name' ? held.get(names.get(id) ?? '') : undefined)
  const written = await writeEpisodeGraphs(ports, { entities: newEntities, episodes: write, deleteEpisodeIds: remove }, {
    namespace, collectionPrefix, exclusive: (work) => work(lease), vectorFor
  })
  report.episode_texts_embedded = written.embedded
  report.episode_vectors_reused = written.borrowed
  return { changed: true, report }
}

/**
 * The borrowed vectors, read from the chunks' own collection: one chunk's vector as stored (what a fresh embedding of its
 * passage gives, one text per run), several chunks' normalised mean, summed in chunk order. A record whose chunk has
 * no stored vector gets none here, so its text is embedded.
 */
async function chunkVectors(
  ports: EpisodicIngestPorts, namespace: string, library: DocumentLibraryView | undefined, borrowed: readonly BorrowedVector[]
): Promise<(collection: string, id: string) => Float32Array | undefined> {
  if (!library || borrowed.length === 0) return () => undefined
  const ids = [...new Set(borrowed.flatMap((b) => b.chunk_ids))]
  const stored = await ports.vectors.vectorsOf(library.collection, namespace, ids)
  const vectors = new Map<string, Float32Array>()
  for (const b of borrowed) {
    const parts = b.chunk_ids.map((id) => stored.get(id))
    if (parts.length === 0 || parts.some((v) => v === undefined)) continue
    vectors.set(`${b.collection}\u0000${b.id}`, parts.length === 1 ? parts[0]! : meanOf(parts as Float32Array[]))
  }
  return (collection, id) => vectors.get(`${collection}\u0000${id}`)
}

/**
 * The vectors the namespace's derived Episodes already hold for the texts of this write, by text, so that a link costs
 * no model run: an edge label stored before (`RelationType_relationship_name`, whose record id is the label), a new
 * entity's name stored as a label, or, for a label that is the name of the stored entity its edge leads to
 * (`involves_entity` edges carry the entity's key, its name), that entity's `Entity_name` vector. The text is the same,
 * so the vector is the one a fresh embedding gives (the local model embeds one text per run: a vector depends on its text
 * alone), whichever document stored it first; what is stored does not change, so `derived_hash` does not name this
 * source. The texts found nowhere are embedded, each distinct text once (`writeEpisodeGraphs`).
 */
async function storedTextVectors(
  ports: EpisodicIngestPorts, namespace: string, collectionPrefix: string, write: readonly EpisodeGraph[],
  entities: ReadonlyMap<string, EpisodicNode>, known: ReadonlyMap<string, string>, newNames: readonly string[]
): Promise<Map<string, Float32Array>> {
  const edges = write.flatMap((g) => g.edges)
  const labels = [...new Set([...edges.map((e) => e.edge_text || e.relationship_name), ...newNames])]
  if (labels.length === 0) return new Map()
  const found = await ports.vectors.vectorsOf(`${collectionPrefix}RelationType_relationship_name`, namespace, labels)
  const named = new Map<string, string>()
  for (const e of edges) {
    const label = e.edge_text || e.relationship_name
    if (!found.has(label) && known.get(e.to) === 'Entity' && entities.get(e.to)?.name === label) named.set(e.to, label)
  }
  if (named.size > 0) {
    const names = await ports.vectors.vectorsOf(`${collectionPrefix}Entity_name`, namespace, [...named.keys()])
    for (const [id, vector] of names) found.set(named.get(id)!, vector)
  }
  return found
}

function meanOf(vectors: readonly Float32Array[]): Float32Array {
  const sum = new Float64Array(vectors[0]!.length)
  for (const v of vectors) for (let i = 0; i < v.length; i++) sum[i] = sum[i]! + v[i]!
  return normalizeL2(sum)
}
