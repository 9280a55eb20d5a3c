/** The schemas of hybrid's fusion options and of the convex explanation an item carries. */
import { Type } from 'typebox'
import { NORMALISATIONS } from './fusion-convex.js'
import { FUSIONS } from './fusion.js'

export const FusionSchema = Type.Enum([...FUSIONS], {
  description: 'How hybrid fuses its legs: `rrf` (Reciprocal Rank Fusion with `rrf_k` and `weights`) or `convex` ' +
    '(`alpha · lexical + (1 − alpha) · vector` over per-query normalised leg scores). Default: the namespace\'s ' +
    'retrieval defaults, else `convex` (min-max, alpha 0.5), chosen by measurement (README "Quality").'
})

export const AlphaSchema = Type.Number({
  minimum: 0, maximum: 1,
  description: 'Convex fusion (hybrid): weight of the lexical leg in [0, 1]; the vector leg gets 1 − alpha. Default 0.5.'
})

export const NormalisationSchema = Type.Enum([...NORMALISATIONS], {
  description: 'Convex fusion (hybrid): how each leg\'s scores are normalised per query before they are combined: `tmm` ' +
    '(theoretical min-max: (s − m) / (max − m), m = 0 for BM25 and −1 for cosine), `minmax` ((s − min) / (max − min) over ' +
    'the leg\'s window; the default) or `zscore` ((s − mean) / std). Default chosen by measurement: README "Quality".'
})

const PerLeg = (what: string) => Type.Object({
  vector: Type.Optional(Type.Number({ description: `${what} of the vector leg; absent when it did not find the chunk.` })),
  lexical: Type.Optional(Type.Number({ description: `${what} of the lexical leg; absent when it did not find the chunk.` })),
  graph: Type.Optional(Type.Number({ description: `${what} of the graph leg; absent when it did not run or did not find the chunk.` }))
}, { description: `${what}, per leg.` })

export const GraphWeightSchema = Type.Number({
  minimum: 0, maximum: 1,
  description: 'Convex fusion (hybrid) with the `graph` leg: its weight g in [0, 1]; the lexical leg then gets alpha · (1 − g) and ' +
    'the vector leg (1 − alpha) · (1 − g). Default 1/3 (the three legs alike at alpha 0.5). Without the graph leg it has no effect.'
})

export const ConvexExplanationSchema = Type.Object({
  alpha: Type.Number({ description: 'The lexical leg\'s weight used; the vector leg\'s is 1 − alpha (each times 1 − `graph_weight` when the graph leg answered).' }),
  graph_weight: Type.Optional(Type.Number({ description: 'The graph leg\'s weight used; present only when the graph leg answered.' })),
  normalisation: NormalisationSchema,
  normalised: PerLeg('The normalised score (in [0, 1] for tmm and minmax; a z value for zscore)'),
  contributions: PerLeg('What the leg added to `score` (its weight times its normalised score; `score` is their sum)')
}, { description: 'hybrid with `fusion: convex`: the convex combination behind `score`.' })
