/**
 * One document's derived Episodes (docs/derivation.md, "Derived Episodes"): a pure function of its chunks, its
 * contribution to the derived graph and the options, so that re-deriving a document replaces exactly what it
 * derived before. No LLM: an Episode per document (or per top-level section of a long one), a Facet per section
 * (per chunk of a section that spans several), its key sentences as FacetPoints, links to the derived entities the
 * section names.
 */
import { createHash } from 'node:crypto'
import { DERIVED_EPISODE_PREFIX, type EpisodeGraph, type EpisodicEdge, type EpisodicNode } from '../providers/episodic-graph/port.js'
import type { DerivedEntity } from './document.js'
import { plainText } from './marks.js'
import { nameKey } from './normalise.js'
import { sentencesOf } from './sentences.js'

/** What Episode derivation reads of a chunk. */
export interface EpisodeChunk {
  id: string
  chunk_index: number
  text: string
  title?: string
  heading_path?: readonly string[]
  /** The text the chunk's vector was embedded from (`passageText`): a Facet's anchor text, so the vector is reused. */
  passage: string
}

export interface EpisodeDerivationOptions {
  /** A document of more chunks than this, with two top-level sections or more, gives one Episode per top-level section. Default 24. */
  maxEpisodeChunks: number
  /** At most this many Episodes per document; further top-level sections join the last. Default 32. */
  maxEpisodesPerDocument: number
  /** Key sentences kept per Facet. Default 2. */
  pointsPerFacet: number
  /** A key sentence is between these many characters long. Default 8 and 120. */
  minPointLength: number
  maxPointLength: number
  /**
   * Derived entities linked per Facet and per Episode, most mentioned first. Default 0 and 0: a linked entity's name is
   * embedded the first time a namespace links it (one model run each; its links' labels take the same vector), which on
   * the demo corpus bought Recall@5 but not MRR@10 for 0.62x to 0.82x the throughput without derivation, and 0.63x on
   * the CMRC trial's paragraphs (bench/results/derived-quality.log.md, "Which entities to link"); 4 and 8 link them.
   */
  entitiesPerFacet: number
  entitiesPerEpisode: number
  /**
   * Least mentions in the document of an entity that a Facet or the Episode links (key sentences still weigh every
   * entity). Default 2: the names a document mentions once, most of the new names a namespace would embed, are not
   * linked; on the demo corpus 4 / 8 links so chosen kept the Recall@5 of linking any (docs/derivation.md, "Which
   * entities to link"); 1 links any.
   */
  entityMinMentions: number
  /** Longest Episode summary, in characters. Default 300. */
  maxSummaryLength: number
  /** Longest Facet label, in characters. Default 80. */
  maxLabelLength: number
  /** Where the vectors of labels, key sentences and summaries come from (a Facet's anchor is always its chunk's). */
  vectors: EpisodeVectorSources
}

/**
 * `chunk`: a Facet label or a FacetPoint takes the vector of the chunk it was drawn from; `chunks`: an Episode's summary
 * takes the normalised mean of its chunks' vectors; `text`: the text is embedded. A borrowed vector costs no model run;
 * the record keeps its own text (what keyword bonuses and the output read).
 */
interface EpisodeVectorSources {
  labels: 'chunk' | 'text'
  points: 'chunk' | 'text'
  summaries: 'chunks' | 'text'
}

export const DEFAULT_EPISODE_OPTIONS: EpisodeDerivationOptions = {
  maxEpisodeChunks: 24,
  maxEpisodesPerDocument: 32,
  pointsPerFacet: 2,
  minPointLength: 8,
  maxPointLength: 120,
  entitiesPerFacet: 0,
  entitiesPerEpisode: 0,
  entityMinMentions: 2,
  maxSummaryLength: 300,
  maxLabelLength: 80,
  vectors: { labels: 'chunk', points: 'chunk', summaries: 'chunks' }
}

/** One chunk an Episode rests on, with the Facet and FacetPoints drawn from it: an item's evidence. */
interface EpisodeEvidence {
  chunk_id: string
  heading_path: string[]
  /** The Facet and FacetPoint ids drawn from this chunk. */
  nodes: string[]
}

export interface DerivedEpisodes {
  /** The Episodes, each with `derived_doc`, `derived_hash` and `evidence` (JSON of `EpisodeEvidence[]`) on its node. */
  episodes: EpisodeGraph[]
  /** The derived entities the Episodes link to: id `d:` + normalised name, named by that key (the same in every document). */
  entities: EpisodicNode[]
  /** The vector records that take their chunks' vectors instead of embedding their text, Episode by Episode. */
  borrowed: BorrowedVector[]
}

/** A record of an Episode collection whose vector is its chunk's (one chunk) or its chunks' normalised mean (several). */
export interface BorrowedVector {
  /** The Episode the record belongs to. */
  episode: string
  /** One of the Episode-owned collections (`src/providers/episodic-graph/collections.ts`). */
  collection: 'Episode_summary' | 'Facet_search_text' | 'Facet_anchor_text' | 'FacetPoint_search_text'
  id: string
  chunk_ids: string[]
}


/** Every id a document's derived Episodes may have, for deleting them whatever their number was. */
export function derivedEpisodeIds(docId: string, options: Pick<EpisodeDerivationOptions, 'maxEpisodesPerDocument'>): string[] {
  const base = `${DERIVED_EPISODE_PREFIX}${docId}`
  return [base, ...Array.from({ length: options.maxEpisodesPerDocument }, (_, k) => `${base}#${k + 1}`)]
}

export function deriveEpisodes(
  docId: string, chunks: readonly EpisodeChunk[], entities: readonly DerivedEntity[], options: EpisodeDerivationOptions = DEFAULT_EPISODE_OPTIONS
): DerivedEpisodes {
  const ordered = [...chunks].sort((a, b) => a.chunk_index - b.chunk_index)
  if (ordered.length === 0) return { episodes: [], entities: [], borrowed: [] }
  const title = ordered.find((c) => c.title)?.title ?? ordered.find((c) => c.heading_path?.length)?.heading_path?.[0] ?? docId
  const groups = episodeGroups(ordered, options)
  const base = `${DERIVED_EPISODE_PREFIX}${docId}`
  const mentions = new Map(entities.map((e) => [e.key, e] as const))
  const linked = new Map<string, EpisodicNode>()
  const borrowed: BorrowedVector[] = []
  const episodes = groups.map((group, k): EpisodeGraph => {
    const id = groups.length === 1 ? base : `${base}#${k + 1}`
    const path = group[group.length - 1]!.heading_path ?? []
    const top = path[0] === title ? path[1] : path[0]
    const name = groups.length === 1 || !top ? title : `${title} > ${top}`
    return episodeOf(id, name, title, docId, group, mentions, linked, borrowed, options)
  })
  return { episodes, entities: [...linked.values()].sort((a, b) => compare(a.id, b.id)), borrowed }
}

/**
 * The chunks of each Episode: the whole document, or its top-level sections when it is long. A top-level section is
 * the first heading level at which the chunks differ: under a title every chunk shares (`# Title`), its `##` sections.
 */
function episodeGroups(chunks: readonly EpisodeChunk[], options: EpisodeDerivationOptions): EpisodeChunk[][] {
  if (chunks.length <= options.maxEpisodeChunks) return [[...chunks]]
  const titles = new Set(chunks.map((c) => c.heading_path?.[0]))
  const depth = titles.size === 1 && !titles.has(undefined) ? 1 : 0
  const groups: EpisodeChunk[][] = []
  let current: EpisodeChunk[] = []
  let top: string | undefined
  for (const c of chunks) {
    const head = c.heading_path?.[depth]
    // chunks before the first such heading open the first group; a new one opens the next group
    if (current.length > 0 && head !== undefined && head !== top && top !== undefined && groups.length + 1 < options.maxEpisodesPerDocument) {
      groups.push(current)
      current = []
    }
    if (head !== undefined) top = head
    current.push(c)
  }
  groups.push(current)
  return groups.length < 2 ? [[...chunks]] : groups
}

function episodeOf(
  id: string, name: string, title: string, docId: string, chunks: readonly EpisodeChunk[], mentions: ReadonlyMap<string, DerivedEntity>,
  linked: Map<string, EpisodicNode>, borrowed: BorrowedVector[], options: EpisodeDerivationOptions
): EpisodeGraph {
  const sources = options.vectors
  if (sources.summaries === 'chunks') borrowed.push({ episode: id, collection: 'Episode_summary', id, chunk_ids: chunks.map((c) => c.id) })
  const nodes: EpisodicNode[] = []
  const edges: EpisodicEdge[] = []
  const evidence: EpisodeEvidence[] = []
  const summary: string[] = []
  const episodeEntities = new Map<string, number>()
  chunks.forEach((chunk, f) => {
    const facetId = `${id}/f${f + 1}`
    const headings = [...(chunk.heading_path ?? [])]
    // the document's title first, so that two documents' sections of one heading (概述) keep apart
    const label = cut((headings[0] === title ? headings : [title, ...headings]).join(' > '), options.maxLabelLength)
    const plain = plainText(chunk.text)
    const named = entitiesIn(chunk.id, mentions)
    const points = keySentences(plain, named, options)
    nodes.push({ id: facetId, type: 'Facet', name: label, search_text: label, anchor_text: chunk.passage })
    if (sources.labels === 'chunk') borrowed.push({ episode: id, collection: 'Facet_search_text', id: facetId, chunk_ids: [chunk.id] })
    borrowed.push({ episode: id, collection: 'Facet_anchor_text', id: facetId, chunk_ids: [chunk.id] })
    edges.push({ from: id, to: facetId, relationship_name: 'has_facet' })
    const pointIds = points.map((sentence, p) => {
      const pointId = `${facetId}/p${p + 1}`
      nodes.push({ id: pointId, type: 'FacetPoint', name: sentence, search_text: sentence })
      if (sources.points === 'chunk') borrowed.push({ episode: id, collection: 'FacetPoint_search_text', id: pointId, chunk_ids: [chunk.id] })
      edges.push({ from: facetId, to: pointId, relationship_name: 'has_point' })
      return pointId
    })
    for (const e of named.filter((x) => x.mentions >= options.entityMinMentions).slice(0, options.entitiesPerFacet)) {
      const entityId = link(linked, e)
      edges.push({ from: facetId, to: entityId, relationship_name: 'involves_entity', edge_text: e.key })
    }
    for (const e of named) episodeEntities.set(e.key, (episodeEntities.get(e.key) ?? 0) + 1)
    evidence.push({ chunk_id: chunk.id, heading_path: headings, nodes: [facetId, ...pointIds] })
    if (points[0] !== undefined) summary.push(headings.length > 0 ? `【${headings[headings.length - 1]}】${points[0]}` : points[0])
  })
  const ranked = [...episodeEntities.keys()].map((key) => mentions.get(key)!).filter((e) => e.mentions >= options.entityMinMentions)
    .sort((a, b) => b.mentions - a.mentions || compare(a.key, b.key)).slice(0, options.entitiesPerEpisode)
  for (const e of ranked) {
    const entityId = link(linked, e)
    edges.push({
      from: id, to: entityId, relationship_name: 'involves_entity',
      edge_text: e.description ? `${e.key} | ${cut(e.description, 200)}` : e.key,
      ...(e.description ? { description: e.description } : {})
    })
  }
  const text = cut(summary.length > 0 ? `${name}：${summary.join('')}` : name, options.maxSummaryLength)
  const episode: EpisodicNode = { id, type: 'Episode', name, summary: text, derived_doc: docId, evidence: JSON.stringify(evidence) }
  const graph: EpisodeGraph = { episode, nodes, edges }
  // the vector sources are part of what is stored: another choice writes the Episode again
  episode.derived_hash = createHash('sha256').update(JSON.stringify([graph, ranked.map((e) => e.key), options.vectors])).digest('hex').slice(0, 24)
  return graph
}

/** The document's entities this chunk names, most mentioned (in the document) first, then by name. */
function entitiesIn(chunkId: string, mentions: ReadonlyMap<string, DerivedEntity>): DerivedEntity[] {
  return [...mentions.values()].filter((e) => e.chunk_ids.includes(chunkId))
    .sort((a, b) => b.mentions - a.mentions || compare(a.key, b.key))
}

/**
 * The chunk's key sentences, in text order: those of fitting length that name the most of the chunk's entities (ties:
 * the earlier); with none of fitting length, the first sentence cut to the longest length.
 */
function keySentences(plain: string, named: readonly DerivedEntity[], options: EpisodeDerivationOptions): string[] {
  const sentences = sentencesOf(plain)
  const fitting = sentences.map((s, at) => ({ s, at, n: [...s].length })).filter((x) => x.n >= options.minPointLength && x.n <= options.maxPointLength)
  if (fitting.length === 0) return sentences[0] ? [cut(sentences[0], options.maxPointLength)] : []
  const scored = fitting.map((x) => {
    const key = nameKey(x.s)
    return { ...x, score: named.filter((e) => key.includes(e.key)).length }
  })
  return scored.sort((a, b) => b.score - a.score || a.at - b.at).slice(0, options.pointsPerFacet)
    .sort((a, b) => a.at - b.at).map((x) => x.s)
}

function link(linked: Map<string, EpisodicNode>, e: DerivedEntity): string {
  const id = `d:${e.key}`
  if (!linked.has(id)) linked.set(id, { id, type: 'Entity', name: e.key })
  return id
}

function cut(text: string, max: number): string {
  const chars = [...text.trim()]
  return chars.length <= max ? chars.join('') : `${chars.slice(0, max - 1).join('')}…`
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
