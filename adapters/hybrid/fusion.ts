/**
 * The hybrid fusion rules behind one entry point: which rule runs, with which settings, and the explanation
 * each fused candidate carries (what every leg contributed under that rule).
 */
import { fuseByConvex, type Normalisation } from './fusion-convex.js'
import { fuseByRrf } from './rrf.js'

export const FUSIONS = ['rrf', 'convex'] as const
export type Fusion = (typeof FUSIONS)[number]

/** The lowest score each leg's scoring function can give: BM25 is never negative, cosine similarity is ≥ −1. */
const THEORETICAL_MIN: Record<string, number> = { vector: -1, lexical: 0, graph: 0 }

/**
 * The graph leg's share of a convex fusion when the request does not set `graph_weight`: the three legs weigh alike
 * (lexical alpha·2/3, vector (1 − alpha)·2/3, graph 1/3 at alpha 0.5), as ApeMind's RRF weighs its channels 1 each.
 */
const DEFAULT_GRAPH_WEIGHT = 1 / 3

export interface FusionSettings {
  fusion: Fusion
  /** rrf */
  k: number
  weights: Partial<Record<string, number>>
  /** convex: weight of the lexical leg. */
  alpha: number
  normalisation: Normalisation
  window: number
  /** convex: the graph leg's weight g when it answered; the other two then share 1 − g as alpha divides it. */
  graphWeight?: number
}

export interface LegHits {
  leg: string
  hits: readonly { id: string; score: number }[]
}

type FusionExplanation =
  | { score_kind: 'rrf'; rrf: { k: number; contributions: Record<string, number> } }
  | { score_kind: 'convex'; convex: { alpha: number; graph_weight?: number; normalisation: Normalisation; normalised: Record<string, number>; contributions: Record<string, number> } }

export interface Fused {
  id: string
  score: number
  ranks: Record<string, number>
  explanation: FusionExplanation
}

/**
 * The default fusion when neither the request nor the namespace sets one, chosen by measurement
 * (bench/results/fusion.md): convex, min-max, alpha 0.5, the untuned midpoint. On CMRC trial it beats the
 * lexical leg alone (MRR@10 0.985 vs 0.979, Recall@5 0.994 vs 0.990); on the demo corpus questions it
 * beats or ties RRF k 60 on every figure. CMRC's own best alpha (0.6) loses Recall@1 to RRF on the demo
 * questions, so it is not the default. `fusion: "rrf"` is still exactly the RRF of before.
 */
export const DEFAULT_FUSION: Pick<FusionSettings, 'fusion' | 'alpha' | 'normalisation'> = { fusion: 'convex', alpha: 0.5, normalisation: 'minmax' }

export function fuseLegs(legs: readonly LegHits[], s: FusionSettings): Fused[] {
  if (s.fusion === 'rrf') {
    return fuseByRrf(legs.map((l) => ({ leg: l.leg, ids: l.hits.map((h) => h.id) })),
      { k: s.k, window: s.window, weights: s.weights as Record<string, number>, tieBreakLeg: 'vector' })
      .map((c) => ({ id: c.id, score: c.score, ranks: c.ranks, explanation: { score_kind: 'rrf', rrf: { k: s.k, contributions: round6Values(c.contributions) } } }))
  }
  // with the graph leg's list, every leg gets its own weight; without it, alpha's two weights exactly as before
  const g = legs.some((l) => l.leg === 'graph') ? s.graphWeight ?? DEFAULT_GRAPH_WEIGHT : undefined
  const legWeights = g === undefined ? undefined : { lexical: s.alpha * (1 - g), vector: (1 - s.alpha) * (1 - g), graph: g }
  return fuseByConvex(legs.map((l) => ({ leg: l.leg, hits: l.hits, theoreticalMin: THEORETICAL_MIN[l.leg] ?? 0 })),
    { alpha: s.alpha, window: s.window, normalisation: s.normalisation, tieBreakLeg: 'vector', ...(legWeights ? { legWeights } : {}) })
    .map((c) => ({
      id: c.id, score: c.score, ranks: c.ranks,
      explanation: {
        score_kind: 'convex',
        convex: {
          alpha: s.alpha, ...(g !== undefined ? { graph_weight: round6(g) } : {}), normalisation: s.normalisation,
          normalised: round6Values(c.normalised), contributions: round6Values(c.contributions)
        }
      }
    }))
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6
const round6Values = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, round6(v)]))

/**
 * The fusion a request asks for: its `fusion`, else the one its options belong to (`rrf_k` or `weights`:
 * rrf, as before `fusion` existed; `alpha` or `normalisation`: convex), else undefined (the default).
 */
export function impliedFusion(r: { fusion?: Fusion; rrf_k?: number; weights?: unknown; alpha?: number; normalisation?: string; graph_weight?: number }): Fusion | undefined {
  if (r.fusion) return r.fusion
  if (r.rrf_k !== undefined || r.weights !== undefined) return 'rrf'
  if (r.alpha !== undefined || r.normalisation !== undefined || r.graph_weight !== undefined) return 'convex'
  return undefined
}

/** What is wrong when a request mixes options of both fusions, else undefined. */
export function mixedFusionOptions(r: { fusion?: Fusion; rrf_k?: number; weights?: unknown; alpha?: number; normalisation?: string; graph_weight?: number }, at = ''): string | undefined {
  const rrf = (['rrf_k', 'weights'] as const).filter((k) => r[k] !== undefined)
  const convex = (['alpha', 'normalisation', 'graph_weight'] as const).filter((k) => r[k] !== undefined)
  const fusion = r.fusion ?? (rrf.length > 0 ? 'rrf' : undefined)
  if (fusion === 'rrf' && convex.length > 0) return `${at}${convex.join(', ')} apply to fusion=convex only, not fusion=rrf${r.fusion ? '' : ` (implied by ${rrf.join(', ')})`}`
  if (fusion === 'convex' && rrf.length > 0) return `${at}${rrf.join(', ')} apply to fusion=rrf only, not fusion=convex`
  return undefined
}
