/**
 * BM25 with exactly wink-bm25-text-search's formula (k1 1.2, b 0.75, idf = ln((N - n + 0.5)/(n + 0.5) + 1),
 * each term weight rounded to 4 decimals, a repeated query token counted each time). wink refuses corpora
 * of fewer than 3 documents; this scorer answers for those, and a test checks that both agree.
 */
export const BM25_PARAMS = { k1: 1.2, b: 0.75, k: 1 } as const

export interface TermWeights {
  /** Per document: token -> precomputed term weight. */
  weights: Map<string, Map<string, number>>
}

export function computeTermWeights(docs: readonly { id: string; tokens: readonly string[] }[]): TermWeights {
  const { k1, b, k } = BM25_PARAMS
  const documentFrequency = new Map<string, number>()
  let totalLength = 0
  const freqs = docs.map((doc) => {
    const freq = new Map<string, number>()
    for (const t of doc.tokens) freq.set(t, (freq.get(t) ?? 0) + 1)
    for (const t of freq.keys()) documentFrequency.set(t, (documentFrequency.get(t) ?? 0) + 1)
    totalLength += doc.tokens.length
    return freq
  })
  const n = docs.length
  const avgLength = n === 0 ? 0 : totalLength / n
  const weights = new Map<string, Map<string, number>>()
  docs.forEach((doc, i) => {
    const norm = (1 - b) + b * (avgLength === 0 ? 0 : doc.tokens.length / avgLength)
    const w = new Map<string, number>()
    for (const [t, f] of freqs[i]!) {
      const df = documentFrequency.get(t)!
      const idf = Math.log((n - df + 0.5) / (df + 0.5) + k)
      w.set(t, Number(((f * (k1 + 1)) / (k1 * norm + f) * idf).toFixed(4)))
    }
    weights.set(doc.id, w)
  })
  return { weights }
}

export function scoreQuery(index: TermWeights, queryTokens: readonly string[]): Map<string, number> {
  const scores = new Map<string, number>()
  for (const [id, w] of index.weights) {
    let s = 0
    let matched = false
    for (const t of queryTokens) {
      const v = w.get(t)
      if (v !== undefined) { s += v; matched = true }
    }
    if (matched) scores.set(id, s)
  }
  return scores
}
