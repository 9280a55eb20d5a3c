/**
 * The last fallback over a derived graph, when the question names no entity and the keyword fallback finds none
 * either (it shares no token with any name or description): the namespace's chunks that best match the question
 * lexically (the BM25 index hybrid's lexical leg reads), then the derived entities whose evidence cites one of them.
 * Every such entity is drawn from a chunk that holds what the question asks about, so the bundle stays grounded, but
 * nothing was named: the items score below the keyword fallback (`matched_by: evidence`, docs/derivation.md,
 * "When nothing is named").
 */
import type { KgEntity, KgNeighbourhood } from '../../src/providers/knowledge-graph/port.js'
import type { LexicalHit } from '../../src/providers/lexical-index/port.js'
import { documentOfChunk } from '../../src/kernel/chunk-payload.js'
import type { GraphCandidate } from './expand.js'
import type { ChunkSupport } from './support.js'

/** Evidence items score in (0, EVIDENCE_CEILING], below the keyword fallback's ceiling 0.45. */
export const EVIDENCE_CEILING = 0.3

export interface PassageFallbackOptions {
  /** The namespace's best-matching chunks read (BM25, best first); their derived entities are the candidates. */
  chunks: number
}

export const DEFAULT_PASSAGE_FALLBACK: PassageFallbackOptions = { chunks: 3 }

/** The namespace's chunks that best match a question lexically, best first, at most `limit` (a namespace without documents: none). */
export type PassageSearch = (namespace: string, query: string, limit: number, signal: AbortSignal) => Promise<readonly LexicalHit[]>

/** The documents the hits' chunks belong to, each once, in hit order (for `derivedOf`). */
export function documentsOf(hits: readonly LexicalHit[]): string[] {
  return [...new Set(hits.map((h) => documentOfChunk(h.id)))]
}

/**
 * Each hit chunk's share of the best hit's score (the best: 1): it orders an evidence item's chunks (`evidence.ts`),
 * the chunk that matched the question first.
 */
export function passageSupport(hits: readonly LexicalHit[]): ChunkSupport {
  const top = hits[0]?.score ?? 0
  if (top <= 0) return new Map()
  return new Map(hits.map((h) => [h.id, h.score / top]))
}

/**
 * Every entity among `entities` citing at least one hit chunk, scored EVIDENCE_CEILING × (the best hit it cites over
 * the best hit of all), rounded to 4 decimals. Order: score descending, then more hit chunks cited, then more mentions
 * in the documents of the hits (`derived_from` counts), then id ascending.
 */
export function passageMatches(hits: readonly LexicalHit[], entities: readonly KgEntity[]): Array<{ entity: KgEntity; score: number }> {
  const support = passageSupport(hits)
  if (support.size === 0) return []
  const docs = new Set(documentsOf(hits))
  const ranked: Array<{ entity: KgEntity; best: number; cited: number; mentions: number }> = []
  for (const entity of entities) {
    let best = 0
    let cited = 0
    for (const id of new Set(entity.source_chunk_ids)) {
      const s = support.get(id)
      if (s === undefined) continue
      cited++
      best = Math.max(best, s)
    }
    if (cited === 0) continue
    const mentions = (entity.derived_from ?? []).filter((p) => docs.has(p.doc_id)).reduce((sum, p) => sum + p.count, 0)
    ranked.push({ entity, best, cited, mentions })
  }
  ranked.sort((a, b) => b.best - a.best || b.cited - a.cited || b.mentions - a.mentions || (a.entity.id < b.entity.id ? -1 : a.entity.id > b.entity.id ? 1 : 0))
  return ranked.map(({ entity, best }) => ({ entity, score: Math.round(EVIDENCE_CEILING * best * 10_000) / 10_000 }))
}

/** The matches as candidates (`matched_by: evidence`, hop 0), with the relations `hood` holds touching each. */
export function passageCandidates(matches: ReadonlyArray<{ entity: KgEntity; score: number }>, hood: KgNeighbourhood): GraphCandidate[] {
  return matches.map(({ entity, score }) => ({
    entity,
    score,
    matchedBy: 'evidence' as const,
    hop: 0 as const,
    links: hood.relations.filter((r) => r.source === entity.id || r.target === entity.id)
  }))
}
