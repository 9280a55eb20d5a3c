import type { HybridRequest } from '../../adapters/hybrid/index.js'
import type { ModeAdapter } from '../../adapters/types.js'
import type { LabelledQuery } from './cmrc.js'
import { evaluate, foldToDocuments, type QualityFigures } from './metrics.js'

/** Runs every query through a hybrid adapter with the given options and scores the ranked documents. */
export async function measure(
  adapter: ModeAdapter<HybridRequest>,
  queries: readonly LabelledQuery[],
  options: Omit<HybridRequest, 'query' | 'top_k'>
): Promise<QualityFigures> {
  const runs = []
  for (const q of queries) {
    const { items } = await adapter.retrieve({ query: q.query, top_k: 50, ...options })
    runs.push({ ranked: foldToDocuments(items.map((i) => i.id)), relevant: q.relevant_ids })
  }
  return evaluate(runs)
}
