import type { Embedder } from '../../src/providers/embedder/port.js'
import type { LexicalIndex } from '../../src/providers/lexical-index/port.js'
import type { VectorHit, VectorStore } from '../../src/providers/vector-store/port.js'
import type { LegReport } from '../../src/schemas/recall-bundle.js'
import { runLeg, skippedLeg } from '../legs.js'
import type { AdapterResult, ModeAdapter, RecallItem } from '../types.js'
import { fuseByRrf, type RankedList } from './rrf.js'
import { hybridMatchStrength } from './strength.js'

export type HybridLeg = 'vector' | 'lexical'

export interface HybridRequest {
  query: string
  top_k: number
  legs?: readonly HybridLeg[]
  rrf_k?: number
  window?: number
  weights?: Partial<Record<HybridLeg, number>>
}

/** What the adapter needs to know of a chunk the lexical leg found and the vector leg did not. */
export interface ChunkLookup {
  chunk(id: string): { id: string; doc_id: string; chunk_index: number; text: string; source: string; title?: string } | undefined
  readonly collection: string
  readonly namespace: string
}

export interface HybridPorts {
  vectors: VectorStore
  embedder: Embedder
  lexical: LexicalIndex
  chunks: ChunkLookup
}

export interface HybridDefaults {
  rrfK: number
  window: number
  /** Per-step timeouts in milliseconds. */
  timeouts: { embedding: number; vector: number; lexical: number }
  /** The backend each step calls, as a timeout names it (`vector-store:qdrant`). */
  backends: { embedding: string; vector: string; lexical: string }
}

export const HYBRID_DEFAULTS: HybridDefaults = {
  rrfK: 60,
  window: 50,
  timeouts: { embedding: 2000, vector: 1500, lexical: 1000 },
  backends: { embedding: 'embedder', vector: 'vector-store', lexical: 'lexical-index' }
}

/** Every requested leg failed; `legs` holds only the failed ones, and the message names each with its reason. */
export class AllLegsFailedError extends Error {
  constructor(readonly legs: LegReport[]) {
    super(legs.map((l) => `${l.name}: ${l.status}${l.reason ? ` (${l.reason})` : ''}`).join('; '))
  }
}

export function createHybridAdapter(ports: HybridPorts, defaults: HybridDefaults = HYBRID_DEFAULTS): ModeAdapter<HybridRequest> {
  async function retrieve(request: HybridRequest): Promise<AdapterResult> {
    const legs = new Set<HybridLeg>(request.legs ?? ['vector', 'lexical'])
    const k = request.rrf_k ?? defaults.rrfK
    const window = request.window ?? defaults.window

    const vectorLeg = legs.has('vector') ? vectorSearch(request.query, window) : null
    const lexicalLeg = legs.has('lexical')
      ? runLeg('lexical', defaults.backends.lexical, defaults.timeouts.lexical, () => ports.lexical.search(request.query, window), (h) => h.length)
      : null
    const [vector, lexical] = await Promise.all([vectorLeg, lexicalLeg])

    const reports: LegReport[] = [
      ...(vector ? vector.reports : [skippedLeg('embedding', 'vector leg not requested'), skippedLeg('vector', 'not requested')]),
      lexical ? lexical.report : skippedLeg('lexical', 'not requested')
    ]
    const answered = (vector?.hits != null) || lexical?.ok === true
    if ((vector || lexical) && !answered) throw new AllLegsFailedError(reports.filter((r) => r.status === 'error' || r.status === 'timeout'))

    const vectorHits = vector?.hits ?? []
    const lists: RankedList[] = []
    if (vector?.hits) lists.push({ leg: 'vector', ids: vectorHits.map((h) => h.id) })
    const lexicalHits = lexical?.ok ? lexical.value : []
    if (lexical?.ok) lists.push({ leg: 'lexical', ids: lexicalHits.map((h) => h.id) })

    const fused = fuseByRrf(lists, { k, window, weights: request.weights ?? {}, tieBreakLeg: 'vector' })
    const vectorById = new Map(vectorHits.map((h) => [h.id, h]))
    const lexicalById = new Map(lexicalHits.map((h) => [h.id, h]))
    const items: RecallItem[] = []
    for (const c of fused) {
      if (items.length >= request.top_k) break
      const chunk = describeChunk(c.id, vectorById.get(c.id))
      if (!chunk) continue // deleted between the legs' answers
      const legsMeta: Record<string, { rank: number; score: number }> = {}
      if (c.ranks.vector !== undefined) legsMeta.vector = { rank: c.ranks.vector, score: round4(vectorById.get(c.id)!.score) }
      if (c.ranks.lexical !== undefined) legsMeta.lexical = { rank: c.ranks.lexical, score: round4(lexicalById.get(c.id)!.score) }
      items.push({
        id: c.id,
        text: chunk.text,
        score: round6(c.score),
        source: chunk.source,
        mode: 'hybrid',
        metadata: {
          rank: items.length + 1,
          score_kind: 'rrf',
          doc_id: chunk.doc_id,
          chunk_index: chunk.chunk_index,
          ...(chunk.title ? { title: chunk.title } : {}),
          legs: legsMeta,
          rrf: { k, contributions: Object.fromEntries(Object.entries(c.contributions).map(([l, v]) => [l, round6(v)])) }
        }
      })
    }
    const top = fused[0]
    const match_strength = hybridMatchStrength(
      items.length === 0 || !top ? undefined : { ranks: top.ranks, ...(vectorById.has(top.id) ? { vectorScore: vectorById.get(top.id)!.score } : {}) },
      lexical?.ok === true && lexicalHits.length === 0
    )
    return { items, legs: reports, match_strength }
  }

  async function vectorSearch(query: string, window: number) {
    const embedding = await runLeg('embedding', defaults.backends.embedding, defaults.timeouts.embedding, () => ports.embedder.embedQueries([query]), (v) => v.length)
    if (!embedding.ok) {
      return { hits: null, reports: [embedding.report, skippedLeg('vector', 'query embedding failed')] }
    }
    const search = await runLeg('vector', defaults.backends.vector, defaults.timeouts.vector,
      () => ports.vectors.search(ports.chunks.collection, ports.chunks.namespace, embedding.value[0]!, window), (h) => h.length)
    return { hits: search.ok ? search.value : null, reports: [embedding.report, search.report] }
  }

  function describeChunk(id: string, hit: VectorHit | undefined) {
    const known = ports.chunks.chunk(id)
    if (known) return known
    if (!hit) return undefined
    const p = hit.payload
    return {
      id, doc_id: p.doc_id, text: p.text, source: typeof p.source === 'string' ? p.source : p.doc_id,
      chunk_index: typeof p.chunk_index === 'number' ? p.chunk_index : 0,
      ...(typeof p.title === 'string' ? { title: p.title } : {})
    }
  }

  return { mode: 'hybrid', retrieve }
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4
const round6 = (x: number) => Math.round(x * 1e6) / 1e6
