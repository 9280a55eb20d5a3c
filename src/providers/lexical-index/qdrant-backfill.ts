import type { QdrantClient } from '@qdrant/js-client-rest'
import { decodeChunk } from '../../kernel/chunk-payload.js'
import type { ServiceAnalyzer } from '../../kernel/analyzers.js'
import { lexicalText } from '../../kernel/lexical-text.js'
import { checkNamespace } from '../namespace.js'
import { retryReplicaReads, type QdrantReadConsistency } from '../vector-store/qdrant-cluster.js'
import { analyzeBatch, LEXICAL_VECTOR, lexicalPointOf, WEIGHTED_VECTOR } from './lexical-point.js'

export interface LexicalBackfillOptions {
  /** Only this namespace's points; default every namespace of the collection. */
  namespace?: string
  /** The collection's analyzer (its lexical settings say which). Default `cjk-bigram`. */
  analyzer?: ServiceAnalyzer
  /** Points read and written per request. Default 256. */
  batchSize?: number
  /** Called after each batch. */
  onProgress?: (progress: LexicalBackfillProgress) => void
  /** Replicas of each shard the count and every page read ask (`QDRANT_READ_CONSISTENCY`). Default 1, Qdrant's own. */
  consistency?: QdrantReadConsistency
  /** Runs each request with the caller's error mapping and timeouts. Default: as it comes. */
  call?: <T>(request: () => Promise<T>) => Promise<T>
}

export interface LexicalBackfillProgress {
  /** Points given their lexical leg so far (or found to have one already by the time of the write). */
  done: number
  /** Points without a lexical leg when the backfill started. */
  total: number
  /** Points that cannot get one: not a chunk recall wrote (no text, record id or doc id in their payload). */
  skipped: number
}

// `lex_aref` is written with `lexw`, the last part of the leg to exist: a point without it lacks `lexw` (and perhaps all of it)
const LACKS_LEG = { is_empty: { key: 'lex_aref' } }
const missingLeg = (namespace?: string) => ({
  must: [LACKS_LEG, ...(namespace ? [{ key: 'namespace', match: { value: checkNamespace(namespace) } }] : [])]
})

/**
 * Gives the chunk points written without the lexical leg (by a version before it) their sparse vector and lexical
 * payload, from the text in their payload; the dense vector and the rest of the payload stay. Only points that
 * still lack the leg are read, so it is idempotent and a run that stopped resumes where it was. Safe while the
 * service writes: each write is conditional on the point still lacking the leg (Qdrant's `update_filter` and a
 * filtered `set_payload`), so a point the service rewrote meanwhile (both legs, maybe another text) is left as
 * the service wrote it.
 */
export async function backfillLexicalLeg(client: QdrantClient, collection: string, options: LexicalBackfillOptions = {}): Promise<LexicalBackfillProgress> {
  const call = options.call ?? (<T>(request: () => Promise<T>) => request())
  const batch = options.batchSize ?? 256
  const filter = missingLeg(options.namespace)
  const consistency = options.consistency ?? 1
  // the client's `count` leaves out `consistency`; the API call beneath takes it
  const counted = await call(() => retryReplicaReads(() => client.api().countPoints({ collection_name: collection, consistency, exact: true, filter })))
  const total = counted.data.result?.count ?? 0
  const progress: LexicalBackfillProgress = { done: 0, total, skipped: 0 }
  let offset: string | number | undefined
  for (;;) {
    const page = await call(() => retryReplicaReads(() => client.scroll(collection, {
      consistency, limit: batch, filter, with_payload: { include: ['id', 'doc_id', 'text', 'chunk_index', 'title', 'heading_path'] }, with_vector: false,
      ...(offset !== undefined ? { offset } : {})
    })))
    const texts = page.points.flatMap((p) => {
      const text = lexicalTextOf(p.payload)
      if (text === undefined) {
        progress.skipped += 1
        return []
      }
      return [{ id: p.id, text }]
    })
    // the page's own average length is the reference of its weights (the search's bound allows for any reference)
    const { tokens, averageLength } = analyzeBatch(texts.map((t) => t.text), options.analyzer)
    const points = texts.map((t, i) => ({ id: t.id, lex: lexicalPointOf(tokens[i]!, averageLength) }))
    if (points.length > 0) {
      await call(() => client.batchUpdate(collection, {
        wait: true,
        operations: [
          { update_vectors: { points: points.map((p) => ({ id: p.id, vector: { [LEXICAL_VECTOR]: p.lex.sparse, [WEIGHTED_VECTOR]: p.lex.weighted } })), update_filter: { must: [LACKS_LEG] } } },
          ...points.map((p) => ({ set_payload: { payload: { ...p.lex.payload }, filter: { must: [{ has_id: [p.id] }, LACKS_LEG] } } }))
        ]
      }))
      progress.done += points.length
    }
    options.onProgress?.({ ...progress })
    const next = page.next_page_offset
    if (next === undefined || next === null) return progress
    offset = next as string | number
  }
}

/** A point's lexical text, as the service would have written it; undefined for a point that is not a chunk of recall's. */
function lexicalTextOf(payload: Record<string, unknown> | null | undefined): string | undefined {
  const { id, doc_id: docId, text } = payload ?? {}
  if (typeof id !== 'string' || typeof docId !== 'string' || typeof text !== 'string') return undefined
  try {
    return lexicalText(decodeChunk(id, { ...payload, doc_id: docId, text }))
  } catch (error) {
    if (error instanceof RangeError) return undefined // neither a chunk_index nor a chunk id
    throw error
  }
}
