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

/** A document the server ranked among its candidates, with what its exact score needs. */
export interface Candidate {
  id: string
  length: number
  /** Its distinct tokens (`lex_terms`): whether it really holds a query token, not another with the same id. */
  terms: readonly string[]
  /** Its raw frequencies by token id (`lex`); colliding tokens summed, their own counts in `split`. */
  indices: readonly number[]
  values: readonly number[]
  split?: Readonly<Record<string, number>> | undefined
}

/** A query token of a search over candidates, with its namespace-wide idf (from its exact df). */
export interface CandidateTerm {
  token: string
  id: number
  count: number
  idf: number
}

/**
 * Exact scores of candidates (the same weights as {@link scorePostings} and the embedded index), in integer units
 * of 1e-4; `filter` applied; best first, equal scores by id ascending; only positive scores.
 */
export function scoreCandidates(
  avgLength: number, terms: readonly CandidateTerm[], candidates: readonly Candidate[], filter?: (id: string) => boolean
): { id: string; units: number }[] {
  const byToken = new Map(terms.map((t) => [t.token, t]))
  const ids = new Set(terms.map((t) => t.id))
  const scored: { id: string; units: number }[] = []
  for (const c of candidates) {
    if (filter && !filter(c.id)) continue
    let frequencies: Map<number, number> | undefined
    let units = 0
    for (const token of c.terms) {
      const term = byToken.get(token)
      if (!term) continue
      let tf = c.split?.[token]
      if (tf === undefined) {
        if (!frequencies) {
          frequencies = new Map()
          for (let i = 0; i < c.indices.length; i++) if (ids.has(c.indices[i]!)) frequencies.set(c.indices[i]!, c.values[i]!)
        }
        tf = frequencies.get(term.id) ?? 0
      }
      if (tf > 0) units += weightUnits(tf, c.length, avgLength, term.idf) * term.count
    }
    if (units > 0) scored.push({ id: c.id, units })
  }
  scored.sort((a, b) => b.units - a.units || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  return scored
}
