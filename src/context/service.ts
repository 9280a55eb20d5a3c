import { Errors } from '../errors.js'
import type { DocumentCatalogView } from '../corpus/document-views.js'
import { checkRequest, fromBody, retrieveCached, type CachedRetrievalDeps } from '../retrieval.js'
import type { ContextBody, ContextResponse } from '../schemas/context.js'
import type { RetrieveResponse } from '../schemas/recall-item.js'
import type { RetrieveBody } from '../schemas/retrieve.js'
import { BudgetTooSmallError, pack, type EvidenceChunk } from './pack.js'
import { tokenCounter } from './tokenizers.js'

export interface ContextDeps {
  retrieval: CachedRetrievalDeps
  /** Where a graphrag item's evidence chunks are read from (the namespace's hybrid corpus). */
  documents: Pick<DocumentCatalogView, 'get'>
  maxQueryChars: number
}

const DEFAULT_EVIDENCE_PER_ITEM = 2

/** Splits a `/context` body into its retrieve request and its packing options. */
function splitContextBody(body: ContextBody) {
  const { max_tokens, tokenizer, format, min_score, evidence, max_evidence_per_item, ...retrieve } = body
  return {
    retrieve: retrieve as RetrieveBody,
    packing: {
      maxTokens: max_tokens, tokenizer: tokenizer ?? 'o200k_base', format: format ?? 'markdown',
      ...(min_score !== undefined ? { minScore: min_score } : {}),
      evidence: evidence ?? 'include', maxEvidencePerItem: max_evidence_per_item ?? DEFAULT_EVIDENCE_PER_ITEM
    }
  }
}

/**
 * Runs the retrieval exactly as `POST /retrieve` does (checks, response cache, overload guard, metrics) and
 * packs its bundle within the budget. Returns the retrieve answer too (the MCP tool hands it on).
 */
export async function retrieveAndPack(deps: ContextDeps, body: ContextBody): Promise<{ answer: ContextResponse; retrieved: RetrieveResponse }> {
  const started = performance.now()
  const { retrieve, packing } = splitContextBody(body)
  const request = checkRequest(fromBody(retrieve), deps.maxQueryChars)
  const [{ body: retrievedBody, cached }, counter] = await Promise.all([retrieveCached(deps.retrieval, request), tokenCounter(packing.tokenizer)])
  // a cache hit is the stored JSON bytes
  const retrieved = Buffer.isBuffer(retrievedBody) ? JSON.parse(retrievedBody.toString('utf8')) as RetrieveResponse : retrievedBody
  // graphrag's evidence is the hybrid corpus's chunks: over shared stores, brought up to them (and loaded) first
  if (request.mode === 'graphrag') await deps.retrieval.readState('hybrid', request.namespace).catch(() => undefined)
  const library = deps.documents.get(request.namespace)
  const chunk = (id: string): EvidenceChunk | undefined => {
    const c = library?.chunk(id)
    return c ? { text: c.text, source: c.source, ...(c.title ? { title: c.title } : {}) } : undefined
  }
  const packingStarted = performance.now()
  let packed
  try {
    packed = pack(retrieved.recall_bundle, { ...packing, counter, chunk })
  } catch (error) {
    if (error instanceof BudgetTooSmallError) throw new Errors.contextBudgetTooSmall(error.message)
    throw error
  }
  const packingMs = performance.now() - packingStarted
  return {
    retrieved,
    answer: {
      mode: retrieved.mode,
      query: retrieved.query,
      namespace: retrieved.namespace,
      format: packing.format,
      tokenizer: packing.tokenizer,
      max_tokens: packing.maxTokens,
      tokens: packed.tokens,
      context: packed.context,
      citations: packed.citations,
      manifest: packed.manifest,
      match_strength: retrieved.match_strength,
      legs: retrieved.legs,
      ...(retrieved.image_items ? { image_items: retrieved.image_items } : {}),
      cached,
      packing_ms: Math.round(packingMs * 1000) / 1000,
      took_ms: Math.round((performance.now() - started) * 100) / 100
    } as ContextResponse
  }
}
