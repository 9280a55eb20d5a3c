/** Retrieval quality over ranked document ids (chunks already folded to their documents). */
export interface QualityFigures {
  queries: number
  recall_at_1: number
  recall_at_5: number
  recall_at_10: number
  mrr_at_10: number
  ndcg_at_10: number
}

/** Chunk ids `<doc>#<i>` to document ids, keeping each document's first (best) position. */
export function foldToDocuments(chunkIds: readonly string[]): string[] {
  const seen = new Set<string>()
  const out: string[] = []
  for (const id of chunkIds) {
    const doc = id.slice(0, id.lastIndexOf('#') === -1 ? id.length : id.lastIndexOf('#'))
    if (!seen.has(doc)) {
      seen.add(doc)
      out.push(doc)
    }
  }
  return out
}

export function evaluate(runs: readonly { ranked: readonly string[]; relevant: readonly string[] }[]): QualityFigures {
  let r1 = 0, r5 = 0, r10 = 0, mrr = 0, ndcg = 0
  for (const { ranked, relevant } of runs) {
    const rel = new Set(relevant)
    const hitsAt = (k: number) => ranked.slice(0, k).filter((id) => rel.has(id)).length / rel.size
    r1 += hitsAt(1)
    r5 += hitsAt(5)
    r10 += hitsAt(10)
    const first = ranked.slice(0, 10).findIndex((id) => rel.has(id))
    if (first >= 0) mrr += 1 / (first + 1)
    let dcg = 0
    ranked.slice(0, 10).forEach((id, i) => { if (rel.has(id)) dcg += 1 / Math.log2(i + 2) })
    let ideal = 0
    for (let i = 0; i < Math.min(10, rel.size); i++) ideal += 1 / Math.log2(i + 2)
    ndcg += ideal > 0 ? dcg / ideal : 0
  }
  const n = runs.length || 1
  const f = (x: number) => Math.round((x / n) * 10000) / 10000
  return { queries: runs.length, recall_at_1: f(r1), recall_at_5: f(r5), recall_at_10: f(r10), mrr_at_10: f(mrr), ndcg_at_10: f(ndcg) }
}
