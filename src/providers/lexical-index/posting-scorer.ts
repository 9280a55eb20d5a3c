import type { LexicalHit } from './port.js'
import { BM25_PARAMS, weightUnits } from './scorer.js'

/** One query token's whole posting list in a namespace: every document holding it, with its frequency there. */
export interface TermPostings {
  /** How many times the query holds the token. */
  count: number
  postings: readonly { id: string; tf: number; length: number }[]
}

/**
 * The top `limit` documents over complete posting lists, scored as the embedded index scores (`scorer.ts`):
 * df is a list's length, N and the total length are the namespace's, each term weight is rounded to 4
 * decimals and the sum kept in integer units of 1e-4; best first, equal scores by id ascending; `filter`
 * is applied before the top `limit` is taken.
 */
export function scorePostings(
  n: number, totalLength: number, terms: readonly TermPostings[], limit: number, filter?: (id: string) => boolean
): LexicalHit[] {
  const k = Math.floor(limit)
  if (!(k >= 1) || n === 0) return []
  const avgLength = totalLength / n
  const units = new Map<string, number>()
  for (const term of terms) {
    const df = term.postings.length
    if (df === 0) continue
    const idf = Math.log(((n - df + 0.5) / (df + 0.5)) + BM25_PARAMS.k)
    for (const p of term.postings) units.set(p.id, (units.get(p.id) ?? 0) + weightUnits(p.tf, p.length, avgLength, idf) * term.count)
  }
  const scored: { id: string; units: number }[] = []
  for (const [id, u] of units) if (u > 0 && (!filter || filter(id))) scored.push({ id, units: u })
  scored.sort((a, b) => b.units - a.units || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  return scored.slice(0, k).map((s) => ({ id: s.id, score: s.units / 1e4 }))
}
