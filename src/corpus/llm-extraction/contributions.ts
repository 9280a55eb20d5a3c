/**
 * The LLM's part of a document write's derivation (docs/llm-extraction.md): each written document's contribution by
 * the rules, joined with what the LLM extracted from the same stored chunks. Called by the write path inside its
 * derived part, so the result goes through the same `replaceDerived` as the rules' alone.
 */
import { llmContribution, mergeContributions } from '../../derive/llm/answer.js'
import type { DerivationChunk } from '../../derive/document.js'
import type { DerivationOptions } from '../../derive/options.js'
import type { KgContribution } from '../../providers/knowledge-graph/port.js'
import type { DocumentLibraryView } from '../document-views.js'
import { storedChunksOf } from '../derived-contribution.js'
import { addStats, noStats, type ExtractOptions, type LlmExtractionStats, type LlmExtractor } from './extractor.js'

/** The chunks the library stores for these documents now, in document then chunk order. */
export function chunksOf(docIds: readonly string[], library: DocumentLibraryView | undefined): DerivationChunk[] {
  return docIds.flatMap((id) => storedChunksOf(id, library))
}

/** `contributions` (by document id, the rules' part) with each document's LLM part merged in. */
export async function withLlmExtraction(
  contributions: ReadonlyMap<string, KgContribution>,
  library: DocumentLibraryView | undefined,
  extractor: LlmExtractor,
  options: DerivationOptions,
  extract: ExtractOptions = {}
): Promise<{ contributions: Map<string, KgContribution>; stats: LlmExtractionStats; byDocument: Map<string, LlmExtractionStats> }> {
  const merged = new Map<string, KgContribution>()
  const byDocument = new Map<string, LlmExtractionStats>()
  let stats = noStats()
  for (const [docId, rules] of contributions) {
    const chunks = storedChunksOf(docId, library)
    const { extractions, stats: docStats } = await extractor.extract(chunks, extract)
    stats = addStats(stats, docStats)
    byDocument.set(docId, docStats)
    merged.set(docId, chunks.length === 0 ? rules : mergeContributions(rules, llmContribution(chunks, extractions, options)))
  }
  return { contributions: merged, stats, byDocument }
}
