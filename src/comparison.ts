import type { RecallItem } from '../adapters/types.js'
import { modeDefinition } from './modes.js'
import type { RetrieveResponse } from './schemas/recall-item.js'

/** Persistence of rank-biased overlap: the weight of the first d ranks is 1 - p^d (0.9: ~86% on the top 10). */
const RBO_P = 0.9

/**
 * The evidence an item stands on, as ids of what it was drawn from, by its mode's rule (the definition's
 * `evidence`): a hybrid item is a chunk (its id); a graphrag item cites the chunks in its
 * `metadata.source_chunk_ids`; an Episode stands for itself, as its `source` (`episode:<id>`).
 */
export function evidenceOf(item: Pick<RecallItem, 'id' | 'mode' | 'source' | 'metadata'>): string[] {
  return modeDefinition(item.mode).evidence(item)
}

/** The bundle's evidence in rank order, each id at its first occurrence only. */
export function evidenceList(bundle: readonly Pick<RecallItem, 'id' | 'mode' | 'source' | 'metadata'>[]): string[] {
  return [...new Set(bundle.flatMap(evidenceOf))]
}

/** Values present in both lists, in the order of `a`, each once. */
export function common(a: readonly string[], b: readonly string[]): string[] {
  const inB = new Set(b)
  return [...new Set(a)].filter((x) => inB.has(x))
}

/** |A ∩ B| / |A ∪ B| over the distinct values of each list; null when both are empty (undefined). */
export function jaccard(a: readonly string[], b: readonly string[]): number | null {
  const setA = new Set(a)
  const setB = new Set(b)
  if (setA.size === 0 && setB.size === 0) return null
  let both = 0
  for (const x of setA) if (setB.has(x)) both++
  return both / (setA.size + setB.size - both)
}

/**
 * Rank-biased overlap in its extrapolated form, RBO_ext (Webber, Moffat and Zobel 2010, equation 32 for
 * lists of one length and its generalisation to uneven lengths, equation 30): with S the shorter list
 * (length s), L the longer (length l) and X_d the overlap of the two prefixes of depth d (past s, of all
 * of S with the first d of L),
 *
 *   RBO_ext = (1-p)/p · ( Σ_{d=1..l} X_d/d · p^d + Σ_{d=s+1..l} X_s·(d-s)/(s·d) · p^d ) + ((X_l - X_s)/l + X_s/s) · p^l
 *
 * 1 for identical lists, 0 for disjoint ones. Neither list may hold an id twice. Null when both lists
 * are empty; 0 when only one is.
 */
export function rankBiasedOverlap(a: readonly string[], b: readonly string[], p: number = RBO_P): number | null {
  const [S, L] = a.length <= b.length ? [a, b] : [b, a]
  const s = S.length
  const l = L.length
  if (l === 0) return null
  if (s === 0) return 0
  const seenS = new Set<string>()
  const seenL = new Set<string>()
  let overlap = 0
  let overlapAtS = 0
  let sum = 0
  let weight = 1
  for (let d = 1; d <= l; d++) {
    weight *= p
    const fromL = L[d - 1]!
    if (d <= s) {
      const fromS = S[d - 1]!
      if (fromS === fromL) overlap += 1
      else overlap += (seenL.has(fromS) ? 1 : 0) + (seenS.has(fromL) ? 1 : 0)
      seenS.add(fromS)
    } else if (seenS.has(fromL)) {
      overlap += 1
    }
    seenL.add(fromL)
    if (d === s) overlapAtS = overlap
    sum += (overlap / d) * weight
    if (d > s) sum += ((overlapAtS * (d - s)) / (s * d)) * weight
  }
  return ((1 - p) / p) * sum + ((overlap - overlapAtS) / l + overlapAtS / s) * weight
}

/** What `/retrieve/compare` reports for one pair of arms that both answered. */
export interface PairComparison {
  arms: [number, number]
  common_ids: string[]
  common_evidence: string[]
  common_sources: string[]
  sources_jaccard: number | null
  evidence_rbo: number | null
  took_ms: [number, number]
  match_strength: [RetrieveResponse['match_strength'], RetrieveResponse['match_strength']]
}

const round6 = (x: number | null): number | null => (x === null ? null : Math.round(x * 1e6) / 1e6)

/** Compares the answers of arms `i` and `j`. */
export function comparePair(i: number, a: RetrieveResponse, j: number, b: RetrieveResponse): PairComparison {
  const evidenceA = evidenceList(a.recall_bundle)
  const evidenceB = evidenceList(b.recall_bundle)
  const sourcesA = a.recall_bundle.map((item) => item.source)
  const sourcesB = b.recall_bundle.map((item) => item.source)
  return {
    arms: [i, j],
    common_ids: common(a.recall_bundle.map((item) => item.id), b.recall_bundle.map((item) => item.id)),
    common_evidence: common(evidenceA, evidenceB),
    common_sources: common(sourcesA, sourcesB),
    sources_jaccard: round6(jaccard(sourcesA, sourcesB)),
    evidence_rbo: round6(rankBiasedOverlap(evidenceA, evidenceB)),
    took_ms: [a.took_ms, b.took_ms],
    match_strength: [a.match_strength, b.match_strength]
  }
}

/** Every pair (i < j) of the arms that answered, in index order. */
export function comparePairs(answers: readonly (RetrieveResponse | undefined)[]): PairComparison[] {
  const pairs: PairComparison[] = []
  for (let i = 0; i < answers.length; i++) {
    for (let j = i + 1; j < answers.length; j++) {
      const a = answers[i]
      const b = answers[j]
      if (a !== undefined && b !== undefined) pairs.push(comparePair(i, a, j, b))
    }
  }
  return pairs
}
